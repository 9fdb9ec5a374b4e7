package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// Exit codes, the same for every command.
const (
	ExitOK          = exitcode.OK
	ExitError       = exitcode.Error
	ExitUsage       = exitcode.Usage
	ExitCheckFailed = exitcode.CheckFailed
	ExitLintRefused = exitcode.LintRefused
	ExitInterrupted = exitcode.Interrupted
)

// usageError is bad input on the command line: exit 2 with a pointer to the help. It is the
// one usage-error type, shared with internal/redisconn.
type usageError = exitcode.UsageError

func usagef(format string, args ...any) error { return exitcode.Usagef(format, args...) }

// interrupted is the error of a command a signal stopped after it printed what it had done.
func interruptedError(what string) error { return &exitcode.InterruptedError{What: what} }

// exitCode maps an error to the exit code and writes its one line to errOut, with the password
// (if any) taken out. Errors say their own code (ExitCode); a cancelled context is an interrupt;
// anything else is a runtime error.
func exitCode(err error, errOut io.Writer, secrets []string) int {
	if err == nil {
		return ExitOK
	}
	code, msg := classify(err, secrets)
	switch code {
	case ExitInterrupted:
		if msg == "" {
			fmt.Fprintln(errOut, "limitctl: interrupted")
		} else {
			fmt.Fprintf(errOut, "limitctl: interrupted: %s\n", msg)
		}
	case ExitUsage:
		command := "limitctl"
		var usage *usageError
		if errors.As(err, &usage) && usage.Command != "" {
			command = usage.Command
		}
		fmt.Fprintf(errOut, "limitctl: %s (see '%s --help')\n", msg, command)
	default:
		fmt.Fprintf(errOut, "limitctl: %s\n", msg)
	}
	return code
}

// classify is an error's exit code and its one line, redacted.
func classify(err error, secrets []string) (int, string) {
	msg := human.FirstLine(redact(err.Error(), secrets))
	var coded exitcode.Coder
	switch {
	case errors.As(err, &coded):
		return coded.ExitCode(), msg
	case errors.Is(err, context.Canceled):
		return ExitInterrupted, ""
	}
	return ExitError, msg
}

// writeJSONError prints err as a JSON object on out, for -o json: {"error": {"message",
// "exit_code"}} after schema_version.
func writeJSONError(out io.Writer, err error, secrets []string) {
	var e exitcode.Failure
	e.Error.ExitCode, e.Error.Message = classify(err, secrets)
	if e.Error.Message == "" && e.Error.ExitCode == ExitInterrupted {
		e.Error.Message = "interrupted"
	}
	writeJSON(out, e)
}

// redact removes secrets (the password) and URL credentials from a message.
func redact(msg string, secrets []string) string { return redisconn.Scrub(msg, secrets...) }
