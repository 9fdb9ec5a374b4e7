// Package iostreams are a command's standard streams (after GitHub CLI's iostreams): whether
// each is a terminal, how wide stdout is, its colours, the one confirmation prompt, and whether
// a command wrote its result. Tests swap in buffers and set the terminal flags to see both the
// terminal and piped output.
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

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
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
	// Process is set when the streams are the process's own (System): a command may then tune
	// the process itself, which tests sharing one process never let it.
	Process bool
	// termWidth and errTermWidth measure stdout's and stderr's terminals now (they may have
	// been resized); nil in tests.
	termWidth, errTermWidth func() (int, error)

	// NoColor is --no-color, or NO_COLOR set in the environment: no colour on any stream.
	NoColor bool
	// OutProfile and ErrProfile are the colours stdout's and stderr's terminals can show
	// (from TERM, COLORTERM, tmux); Unknown, as in tests unless set, shows none.
	OutProfile, ErrProfile colorprofile.Profile
	// terminal is the process's stdout itself when it is a terminal, for a full-screen
	// program that must measure and drive it; Out may be wrapped. Nil in tests.
	terminal io.Writer
}

// System are the process's own streams.
func System() *IOStreams {
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY:     term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY:    term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY:    term.IsTerminal(int(os.Stderr.Fd())),
		termWidth:    func() (int, error) { return termWidth(os.Stdout) },
		errTermWidth: func() (int, error) { return termWidth(os.Stderr) },
		OutProfile:   colorprofile.Detect(os.Stdout, os.Environ()),
		ErrProfile:   colorprofile.Detect(os.Stderr, os.Environ()),
		Process:      true,
	}
	if s.StdoutTTY {
		s.terminal = os.Stdout
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		s.Columns = n
	}
	return s
}

func termWidth(f *os.File) (int, error) {
	w, _, err := term.GetSize(int(f.Fd()))
	return w, err
}

// TerminalWidth is the width a table on stdout fits: Columns when set; else the terminal's
// width (80 when it cannot be read); else 0, no bound: a table piped to a file stays whole.
func (s *IOStreams) TerminalWidth() int {
	if s.Columns > 0 {
		return s.Columns
	}
	return width(s.StdoutTTY, s.termWidth)
}

// ErrTerminalWidth is the width lines on stderr wrap at: 0, no bound, when stderr is not a
// terminal (a log keeps whole lines); else Columns when set, or the terminal's width (80 when
// it cannot be read).
func (s *IOStreams) ErrTerminalWidth() int {
	if s.StderrTTY && s.Columns > 0 {
		return s.Columns
	}
	return width(s.StderrTTY, s.errTermWidth)
}

func width(tty bool, measure func() (int, error)) int {
	if !tty {
		return 0
	}
	if measure != nil {
		if w, err := measure(); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// ColorProfile is the colours to write on stdout: none when it is not a terminal or colour was
// turned off, else what the terminal shows.
func (s *IOStreams) ColorProfile() colorprofile.Profile {
	return s.colorProfile(s.StdoutTTY, s.OutProfile)
}

// ErrColorProfile is ColorProfile for stderr (the verdict lines when stdout is piped).
func (s *IOStreams) ErrColorProfile() colorprofile.Profile {
	return s.colorProfile(s.StderrTTY, s.ErrProfile)
}

func (s *IOStreams) colorProfile(tty bool, terminal colorprofile.Profile) colorprofile.Profile {
	switch {
	case !tty:
		return colorprofile.NoTTY
	case s.NoColor || terminal == colorprofile.Unknown:
		return colorprofile.ASCII
	}
	return terminal
}

// ColorScheme paints words for stdout.
func (s *IOStreams) ColorScheme() ColorScheme {
	return ColorScheme{on: s.ColorProfile() > colorprofile.ASCII}
}

// ErrColorScheme paints words for stderr.
func (s *IOStreams) ErrColorScheme() ColorScheme {
	return ColorScheme{on: s.ErrColorProfile() > colorprofile.ASCII}
}

// ColorScheme paints the words that carry a verdict, in the 16 basic colours every colour
// terminal shows; the zero value (no colour) returns them as they are.
type ColorScheme struct{ on bool }

var (
	styleBad  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Red)
	styleGood = lipgloss.NewStyle().Foreground(lipgloss.Green)
	styleWarn = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
)

func (c ColorScheme) paint(st lipgloss.Style, s string) string {
	if !c.on {
		return s
	}
	return st.Render(s)
}

// Bad marks a failure (OVERSHOOT, FAIL), Good a pass, Warn what proves nothing yet.
func (c ColorScheme) Bad(s string) string  { return c.paint(styleBad, s) }
func (c ColorScheme) Good(s string) string { return c.paint(styleGood, s) }
func (c ColorScheme) Warn(s string) string { return c.paint(styleWarn, s) }

// Terminal is stdout as the terminal itself when it is one (the dashboard measures and drives
// it), else Out.
func (s *IOStreams) Terminal() io.Writer {
	if s.terminal != nil {
		return s.terminal
	}
	return s.Out
}

// Test returns streams backed by buffers, none a terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

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
