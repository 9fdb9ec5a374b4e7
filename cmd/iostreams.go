package cmd

import (
	"bytes"
	"io"
	"os"
	"strconv"

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
	// termWidth measures stdout's terminal now (it may have been resized); nil in tests.
	termWidth func() (int, error)
}

// SystemStreams are the process's own streams.
func SystemStreams() *IOStreams {
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

// TestStreams returns streams backed by buffers, none a terminal.
func TestStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
