package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/limitctl/limitctl/internal/redisconn"
)

// Exit codes, the same for every command.
const (
	ExitOK          = 0
	ExitError       = 1   // a runtime error
	ExitUsage       = 2   // bad flags or arguments
	ExitCheckFailed = 3   // an assertion, a lint error, a missing script
	ExitInterrupted = 130 // SIGINT or SIGTERM
)

// usageError is bad input on the command line: exit 2 with a pointer to the help.
type usageError struct {
	msg     string
	command string // the command path for the hint, e.g. "limitctl hammer"
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// checkFailedError means the command ran and a check it makes failed: exit 3. Its report has
// already been printed; the message names what failed.
type checkFailedError struct{ msg string }

func (e *checkFailedError) Error() string { return e.msg }

func checkFailedf(format string, args ...any) error {
	return &checkFailedError{msg: fmt.Sprintf(format, args...)}
}

// interruptedError means a signal stopped the command after it printed what it had done.
type interruptedError struct{ what string }

func (e *interruptedError) Error() string { return e.what }

// cobra reports its own usage problems as plain errors; these are their prefixes.
var cobraUsagePrefixes = []string{
	"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument",
	"flag needs an argument", "accepts ", "requires at least", "requires at most",
	"bad flag syntax", "if any flags in the group", "none of the others can be",
}

// exitCode maps an error to the exit code and writes its one line to errOut, with the password
// (if any) taken out.
func exitCode(err error, errOut io.Writer, secrets []string) int {
	if err == nil {
		return ExitOK
	}
	msg := redact(err.Error(), secrets)
	var usage *usageError
	var connUsage *redisconn.UsageError
	var check *checkFailedError
	var interrupted *interruptedError
	switch {
	case errors.As(err, &interrupted):
		fmt.Fprintf(errOut, "limitctl: interrupted: %s\n", msg)
		return ExitInterrupted
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(errOut, "limitctl: interrupted")
		return ExitInterrupted
	case errors.As(err, &check):
		fmt.Fprintf(errOut, "limitctl: %s\n", msg)
		return ExitCheckFailed
	case errors.As(err, &usage):
		fmt.Fprintf(errOut, "limitctl: %s (see '%s --help')\n", msg, orDefault(usage.command, "limitctl"))
		return ExitUsage
	case errors.As(err, &connUsage):
		fmt.Fprintf(errOut, "limitctl: %s (see 'limitctl --help')\n", msg)
		return ExitUsage
	}
	for _, p := range cobraUsagePrefixes {
		if strings.HasPrefix(err.Error(), p) {
			fmt.Fprintf(errOut, "limitctl: %s (see 'limitctl --help')\n", oneLine(msg))
			return ExitUsage
		}
	}
	fmt.Fprintf(errOut, "limitctl: %s\n", oneLine(msg))
	return ExitError
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// oneLine keeps an error to the single line the exit contract promises.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// redact removes secrets (the password) and URL credentials from a message.
func redact(msg string, secrets []string) string { return redisconn.Scrub(msg, secrets...) }
