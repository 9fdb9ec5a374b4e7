// Package exitcode holds the exit codes limitctl promises and the error types that carry them:
// each error says its own code through ExitCode, and cmd maps any error to a code in one place.
package exitcode

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Exit codes, the same for every command.
const (
	OK          = 0
	Error       = 1   // a runtime error
	Usage       = 2   // bad flags or arguments
	CheckFailed = 3   // an assertion, a lint error, a missing script
	LintRefused = 4   // hammer: lint refused the custom script before any load
	Interrupted = 130 // SIGINT or SIGTERM
)

// Failure is a command's error as -o json prints it when the command printed no result.
type Failure struct {
	Error struct {
		Message  string `json:"message"`
		ExitCode int    `json:"exit_code"`
	} `json:"error"`
}

// Coder is an error that knows its exit code.
type Coder interface {
	error
	ExitCode() int
}

// UsageError is bad input on the command line: exit 2 with a pointer to the help.
type UsageError struct {
	Msg     string
	Command string // the command path for the hint, e.g. "limitctl hammer"; empty until cmd knows it
}

func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2.
func (e *UsageError) ExitCode() int { return Usage }

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// CheckFailedError means the command ran and a check it makes failed: exit 3. Its report has
// usually been printed already; the message names what failed.
type CheckFailedError struct{ Msg string }

func (e *CheckFailedError) Error() string { return e.Msg }

// ExitCode is 3.
func (e *CheckFailedError) ExitCode() int { return CheckFailed }

// CheckFailedf returns a *CheckFailedError.
func CheckFailedf(format string, args ...any) error {
	return &CheckFailedError{Msg: fmt.Sprintf(format, args...)}
}

// LintRefusedError means hammer sent no load because lint found errors in the custom script:
// exit 4, so CI tells a script refused unrun from one that failed on evidence (3).
type LintRefusedError struct{ Msg string }

func (e *LintRefusedError) Error() string { return e.Msg }

// ExitCode is 4.
func (e *LintRefusedError) ExitCode() int { return LintRefused }

// InterruptedError means a signal stopped the command after it reported what it had done.
type InterruptedError struct{ What string }

func (e *InterruptedError) Error() string { return e.What }

// ExitCode is 130.
func (e *InterruptedError) ExitCode() int { return Interrupted }

// Classify is err's exit code and its message after clean (which redacts it to one line): an
// error says its own code (Coder), a cancelled context is an interrupt with no message, and
// anything else is a runtime error.
func Classify(err error, clean func(string) string) (int, string) {
	msg := clean(err.Error())
	var coded Coder
	switch {
	case errors.As(err, &coded):
		return coded.ExitCode(), msg
	case errors.Is(err, context.Canceled):
		return Interrupted, ""
	}
	return Error, msg
}

// Report writes err's one line to w, a usage error's with a pointer to its command's help, and
// returns its exit code (OK for nil).
func Report(err error, w io.Writer, clean func(string) string) int {
	if err == nil {
		return OK
	}
	code, msg := Classify(err, clean)
	switch code {
	case Interrupted:
		if msg == "" {
			fmt.Fprintln(w, "limitctl: interrupted")
		} else {
			fmt.Fprintf(w, "limitctl: interrupted: %s\n", msg)
		}
	case Usage:
		command := "limitctl"
		var usage *UsageError
		if errors.As(err, &usage) && usage.Command != "" {
			command = usage.Command
		}
		fmt.Fprintf(w, "limitctl: %s (see '%s --help')\n", msg, command)
	default:
		fmt.Fprintf(w, "limitctl: %s\n", msg)
	}
	return code
}

// NewFailure is err as -o json prints it: its message and exit code.
func NewFailure(err error, clean func(string) string) Failure {
	var f Failure
	f.Error.ExitCode, f.Error.Message = Classify(err, clean)
	if f.Error.Message == "" && f.Error.ExitCode == Interrupted {
		f.Error.Message = "interrupted"
	}
	return f
}
