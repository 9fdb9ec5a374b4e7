package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"golang.org/x/term"

	"github.com/limitctl/limitctl/internal/bench"
)

// Run shows the dashboard on out (in the alternate screen) until the snapshot channel closes
// (Run returns nil), the user quits with q (opts.Quit) or Ctrl-C (opts.Interrupt; Run returns
// nil, even when they cancel ctx) or ctx ends otherwise (Run returns ctx's error). The terminal
// is restored on every path, a panic in the dashboard included: that comes back as an error.
// Whenever Run returns an error, the run has been interrupted, so it never goes on unseen.
//
// out should be the terminal itself (an *os.File), which the program measures and drives.
// in is read for keys and is used as given: pass os.Stdin only when it is a terminal (bubbletea
// would otherwise open /dev/tty, charmbracelet/bubbletea#761). Run never blocks the engine:
// it takes snapshots as fast as they come and keeps only what it draws.
func Run(ctx context.Context, opts Options, snapshots <-chan bench.Snapshot, in io.Reader, out io.Writer) error {
	if opts.Profile == colorprofile.Unknown {
		opts.Profile = colorprofile.Detect(out, os.Environ())
	}
	m := New(opts)
	m.snapshots = snapshots
	return run(ctx, m, in, out, opts.Profile, opts.ending(true))
}

// run drives any model the way Run drives the dashboard, so tests can hand it one that fails.
// profile is the colours the program may write: the model's own, so both agree.
func run(ctx context.Context, m tea.Model, in io.Reader, out io.Writer, profile colorprofile.Profile, quit func()) (err error) {
	done := make(chan struct{})
	defer close(done)
	if dm, ok := m.(Model); ok {
		dm.done = done
		m = dm
	}
	g := &guard{}
	options := []tea.ProgramOption{tea.WithInput(in), tea.WithOutput(out), tea.WithColorProfile(profile)}
	if f, ok := out.(interface{ Fd() uintptr }); !ok || !term.IsTerminal(int(f.Fd())) {
		// No terminal to measure (a test's buffer): draw at the default size.
		options = append(options, tea.WithWindowSize(defaultWidth, defaultHeight))
	}
	p := tea.NewProgram(guarded{inner: m, g: g}, options...)
	// Every ending goes through Quit, never Kill: bubbletea's kill path closes the input
	// reader while its read loop may still use it (a data race under -race); Quit waits.
	g.quit = func() { go p.Quit() }
	go func() {
		select {
		case <-ctx.Done():
			p.Quit()
		case <-done:
		}
	}()

	userQuit := false
	defer func() {
		if err == nil && !userQuit && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil && quit != nil {
			quit() // whatever ended the dashboard early, the run must not go on unseen
		}
	}()

	final, runErr := p.Run()
	if perr := g.err(); perr != nil {
		return perr
	}
	// Quit usually cancels the very context Run watches: after q that is no error.
	userQuit = quitByUser(final)
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, tea.ErrInterrupted):
		if quit != nil { // SIGINT when the input is not a terminal: same as q
			quit()
		}
		return nil
	default:
		return fmt.Errorf("dashboard: %w", runErr)
	}
}

// quitByUser reports whether the dashboard ended on q or Ctrl-C.
func quitByUser(final tea.Model) bool {
	if g, ok := final.(guarded); ok {
		final = g.inner
	}
	m, ok := final.(interface{ quitRequested() bool })
	return ok && m.quitRequested()
}

// guard holds the first panic caught in the model and can stop the program.
type guard struct {
	mu    sync.Mutex
	panic error
	quit  func()
}

func (g *guard) catch(r any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.panic == nil {
		g.panic = fmt.Errorf("dashboard: panic: %v\n%s", r, debug.Stack())
	}
}

func (g *guard) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.panic
}

// guarded turns a panic in the model into a clean quit: the program then restores the
// terminal on its normal path, and Run returns the panic as an error.
type guarded struct {
	inner tea.Model
	g     *guard
}

func (m guarded) Init() (cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			m.g.catch(r)
			cmd = tea.Quit
		}
	}()
	return m.inner.Init()
}

func (m guarded) Update(msg tea.Msg) (next tea.Model, cmd tea.Cmd) {
	if m.g.err() != nil {
		return m, tea.Quit
	}
	defer func() {
		if r := recover(); r != nil {
			m.g.catch(r)
			next, cmd = m, tea.Quit
		}
	}()
	inner, cmd := m.inner.Update(msg)
	m.inner = inner
	return m, cmd
}

func (m guarded) View() (view tea.View) {
	if m.g.err() != nil {
		return tea.NewView("")
	}
	defer func() {
		if r := recover(); r != nil {
			m.g.catch(r)
			view = tea.NewView("")
			// View cannot return a command: ask the program to quit from outside.
			if m.g.quit != nil {
				m.g.quit()
			}
		}
	}()
	return m.inner.View()
}
