package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/buildinfo"
	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/iostreams"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// Build describes the binary, set by ldflags in main.
type Build = buildinfo.Build

// Factory carries what commands share: streams, the global flags, the clock, and a Redis
// client opened on first use.
type Factory struct {
	IO     *IOStreams
	Build  Build
	Conn   redisconn.Options
	Output tableprint.Format // -o as given; empty means table on a terminal, tsv otherwise (Format)
	Now    func() time.Time
	Getenv func(string) string

	mu     sync.Mutex
	client redis.UniversalClient
	target redisconn.Target
}

// NewFactory returns a factory on the given streams with the real clock and environment.
func NewFactory(io *IOStreams, build Build) *Factory {
	return &Factory{IO: io, Build: build, Now: time.Now, Getenv: os.Getenv}
}

// Client connects to the target named by the global flags (once) and checks it answers.
func (f *Factory) Client(ctx context.Context) (redis.UniversalClient, redisconn.Target, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		return f.client, f.target, nil
	}
	c, target, err := redisconn.Open(ctx, f.Conn, f.Getenv)
	if err != nil {
		return nil, redisconn.Target{}, err
	}
	f.client, f.target = c, target
	return c, target, nil
}

// Close releases the client, if one was opened.
func (f *Factory) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		f.client.Close()
		f.client = nil
	}
}

// secrets lists what must never be printed: the password from any source, URLs included.
func (f *Factory) secrets() []string { return redisconn.Secrets(f.Conn, f.Getenv) }

// Format resolves -o (tableprint.ParseFormat): the flag when given, else table on a terminal
// and tsv when piped. extra are the formats only the running command writes (lint's).
func (f *Factory) Format(extra ...tableprint.Format) (tableprint.Format, error) {
	return tableprint.ParseFormat(f.Output, f.IO.StdoutTTY, extra...)
}

// IOStreams are a command's standard streams, colours and prompt (internal/iostreams).
type IOStreams = iostreams.IOStreams

// ColorScheme paints the words that carry a verdict (internal/iostreams).
type ColorScheme = iostreams.ColorScheme

// SystemStreams are the process's own streams.
func SystemStreams() *IOStreams { return iostreams.System() }

// TestStreams returns streams backed by buffers, none a terminal.
func TestStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) { return iostreams.Test() }

// SchemaVersion is carried by every JSON object limitctl prints.
const SchemaVersion = 1

// printable is a command's result: its domain type, printed as itself (-o json) or its Table.
type printable = tableprint.Result

// printResult prints r on stdout in format, then its notes on stderr.
func printResult(f *Factory, format tableprint.Format, r printable) error {
	if err := writeResult(f.IO.Out, f.IO.TerminalWidth(), format, r); err != nil {
		return err
	}
	writeNotes(f.IO.ErrOut, r)
	return nil
}

// writeResult writes r in format; a table fits width cells (0: no bound).
func writeResult(w io.Writer, width int, format tableprint.Format, r printable) error {
	return tableprint.Print(w, width, format, SchemaVersion, r)
}

// writeNotes writes what a result says a person should know besides the data (Notes), if any.
func writeNotes(w io.Writer, r any) {
	if n, ok := r.(interface{ Notes() []string }); ok {
		for _, note := range n.Notes() {
			fmt.Fprintf(w, "limitctl: note: %s\n", note)
		}
	}
}

// writeJSON writes v as a JSON object with schema_version first.
func writeJSON(w io.Writer, v any) error { return tableprint.JSON(w, SchemaVersion, v) }

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

// exitCode maps an error to its exit code and writes its one line to errOut, without the
// secrets (exitcode.Report), wrapped at width on a terminal (0: whole) with continuation
// lines under the message.
func exitCode(err error, errOut io.Writer, width int, secrets []string) int {
	var line strings.Builder
	code := exitcode.Report(err, &line, cleaner(secrets))
	if line.Len() > 0 {
		for _, l := range human.Hang(strings.TrimSuffix(line.String(), "\n"), width, len("limitctl: ")) {
			fmt.Fprintln(errOut, l)
		}
	}
	return code
}

// classify is an error's exit code and its one line, redacted.
func classify(err error, secrets []string) (int, string) {
	return exitcode.Classify(err, cleaner(secrets))
}

// writeJSONError prints err as a JSON object on out, for -o json: {"error": {"message",
// "exit_code"}} after schema_version.
func writeJSONError(out io.Writer, err error, secrets []string) {
	writeJSON(out, exitcode.NewFailure(err, cleaner(secrets)))
}

// cleaner makes a message one line without secrets (the password) or URL credentials.
func cleaner(secrets []string) func(string) string {
	return func(msg string) string { return human.FirstLine(redisconn.Scrub(msg, secrets...)) }
}

// warnPasswordFlag prints one line when --password (or --sentinel-password) was given: every user of the machine can
// read a process's arguments (ps, /proc/PID/cmdline), as redis-cli warns for -a.
func warnPasswordFlag(c *cobra.Command, f *Factory) {
	if c.Flags().Changed("password") && f.Conn.Password != "" {
		fmt.Fprintln(f.IO.ErrOut, "warning: --password on the command line is visible to other users (ps); use REDISCLI_AUTH or --password-file instead")
	}
	if c.Flags().Changed("sentinel-password") && f.Conn.SentinelPassword != "" {
		fmt.Fprintln(f.IO.ErrOut, "warning: --sentinel-password on the command line is visible to other users (ps); use --sentinel-password-file instead")
	}
}

// writeCI writes a command's CI reports (ciformat.Files) and says where the JUnit report went.
func writeCI(f *Factory, files ciformat.Files, junit, markdown []byte, built error) error {
	wrote, err := files.Write(junit, markdown, built)
	if wrote {
		fmt.Fprintf(f.IO.ErrOut, "JUnit report written to %s\n", files.JUnit)
	}
	return err
}

// checkOutcome returns the command's own outcome when it has one (a failed check stays exit 3
// whatever the formats), after saying on stderr why a CI file could not be written; else the
// write's error.
func checkOutcome(f *Factory, outcome, writeErr error) error {
	if outcome == nil {
		return writeErr
	}
	if writeErr != nil {
		fmt.Fprintf(f.IO.ErrOut, "limitctl: %v\n", writeErr)
	}
	return outcome
}
