// Package iostreams are a command's standard streams (after GitHub CLI's iostreams): whether
// each is a terminal, how wide stdout is, whether colour is on, and the one confirmation prompt.
// Tests swap in buffers and set the terminal flags to see both the terminal and piped output.
package iostreams

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/term"
)

// IOStreams are the standard streams of a command and whether each is a terminal.
// Tests swap in buffers and set the terminal flags to see both the terminal and piped output.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	StdinTTY  bool
	StdoutTTY bool
	StderrTTY bool

	// Columns, above 0, is the width tables fit whatever stdout is: $COLUMNS, or a test's.
	Columns int
	// NoColor is --no-color, or NO_COLOR set in the environment.
	NoColor bool
	// termWidth measures stdout's terminal now (it may have been resized); nil in tests.
	termWidth func() (int, error)
}

// System are the process's own streams.
func System() *IOStreams {
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		termWidth: func() (int, error) {
			w, _, err := term.GetSize(int(os.Stdout.Fd()))
			return w, err
		},
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		s.Columns = n
	}
	return s
}

// TerminalWidth is the width a table on stdout fits: Columns when set; else the terminal's
// width (80 when it cannot be read); else 0, no bound: a table piped to a file stays whole.
func (s *IOStreams) TerminalWidth() int {
	switch {
	case s.Columns > 0:
		return s.Columns
	case !s.StdoutTTY:
		return 0
	case s.termWidth != nil:
		if w, err := s.termWidth(); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// ColorEnabled reports whether output may be coloured: a terminal, and no --no-color or NO_COLOR.
func (s *IOStreams) ColorEnabled() bool { return s.StdoutTTY && !s.NoColor }

// Confirm asks a yes/no question on the terminal (stderr), reading the answer from stdin; only
// y or yes is a yes. A cancelled context (Ctrl-C at the prompt) returns its error.
func (s *IOStreams) Confirm(ctx context.Context, question string) (bool, error) {
	fmt.Fprintf(s.ErrOut, "%s [y/N] ", question)
	answer := make(chan string, 1)
	go func() {
		var line strings.Builder
		buf := make([]byte, 1)
		for {
			n, err := s.In.Read(buf)
			if n == 1 && buf[0] != '\n' {
				line.WriteByte(buf[0])
			}
			if err != nil || (n == 1 && buf[0] == '\n') {
				break
			}
		}
		answer <- line.String()
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(s.ErrOut)
		return false, ctx.Err()
	case a := <-answer:
		a = strings.ToLower(strings.TrimSpace(a))
		return a == "y" || a == "yes", nil
	}
}

// Test returns streams backed by buffers, none a terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// trackedOut remembers whether a command wrote to stdout (a failed assertion's summary already
// says passed: false, so no JSON error object follows it).
type trackedOut struct {
	w     io.Writer
	wrote atomic.Bool
}

func (t *trackedOut) Write(p []byte) (int, error) {
	t.wrote.Store(true)
	return t.w.Write(p)
}

// trackedFile is a trackedOut over a terminal: the dashboard still sees a file it can size.
type trackedFile struct {
	*trackedOut
	f *os.File
}

func (t trackedFile) Read(p []byte) (int, error) { return t.f.Read(p) }
func (t trackedFile) Close() error               { return t.f.Close() }
func (t trackedFile) Fd() uintptr                { return t.f.Fd() }

// TrackOut wraps w; wrote reports whether anything was written through the result, so that a
// command's error becomes JSON on stdout only where no result was printed.
func TrackOut(w io.Writer) (out io.Writer, wrote func() bool) {
	t := &trackedOut{w: w}
	if f, ok := w.(*os.File); ok {
		return trackedFile{t, f}, t.wrote.Load
	}
	return t, t.wrote.Load
}
