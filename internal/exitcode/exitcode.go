// Package exitcode holds the exit codes limitctl promises and the error types that carry them:
// each error says its own code through ExitCode, and cmd maps any error to a code in one place.
package exitcode

import "fmt"

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
