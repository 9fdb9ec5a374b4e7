package tui

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/limitctl/limitctl/internal/bench"
)

// The sequences bubbletea writes to enter and leave the alternate screen.
const (
	enterAltScreen = "\x1b[?1049h"
	leaveAltScreen = "\x1b[?1049l"
	showCursor     = "\x1b[?25h"
)

// syncBuffer is the terminal: bubbletea's renderer writes from its own goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// keyboard is a pipe the test types into, closed at the end of the test.
func keyboard(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// runAsync starts fn and returns a channel with its result; the test fails if it hangs.
func runAsync(t *testing.T, fn func() error) <-chan error {
	t.Helper()
	result := make(chan error, 1)
	go func() { result <- fn() }()
	return result
}

func await(t *testing.T, result <-chan error) error {
	t.Helper()
	select {
	case err := <-result:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// checkRestored fails unless the output entered the alternate screen and left it afterwards.
func checkRestored(t *testing.T, out string) {
	t.Helper()
	enter := strings.Index(out, enterAltScreen)
	leave := strings.LastIndex(out, leaveAltScreen)
	if enter < 0 || leave < enter {
		t.Fatalf("alternate screen not entered then left (enter at %d, leave at %d)", enter, leave)
	}
	if !strings.Contains(out[leave:], showCursor) && !strings.Contains(out[enter:], showCursor) {
		t.Fatal("cursor not shown again")
	}
}

// waitFor polls until the terminal shows want.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("terminal never showed %q", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunEndsWhenTheSnapshotsEnd(t *testing.T) {
	in, _ := keyboard(t)
	out := &syncBuffer{}
	snapshots := make(chan bench.Snapshot)
	o := asciiOptions()
	o.Quit = func() { t.Error("Quit called although the run ended by itself") }
	result := runAsync(t, func() error { return Run(context.Background(), o, snapshots, in, out) })
	for _, s := range fixtureRun(12, naiveShape, luaShape) {
		snapshots <- s
	}
	waitFor(t, out, "OVERSHOOT")
	close(snapshots)
	if err := await(t, result); err != nil {
		t.Fatal(err)
	}
	checkRestored(t, out.String())
	for _, want := range []string{"naive", "lua", "exact"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("terminal never showed %q", want)
		}
	}
}

func TestRunQuitsOnQ(t *testing.T) {
	in, keys := keyboard(t)
	out := &syncBuffer{}
	snapshots := make(chan bench.Snapshot, 1)
	var quits atomic.Int32
	// As in the hammer, Quit cancels the context the dashboard runs under: still no error.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := asciiOptions()
	o.Quit = func() { quits.Add(1); cancel() }
	result := runAsync(t, func() error { return Run(ctx, o, snapshots, in, out) })
	snapshots <- fixtureRun(1, luaShape)[0]
	waitFor(t, out, "lua")
	if _, err := keys.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	if err := await(t, result); err != nil {
		t.Fatal(err)
	}
	if quits.Load() != 1 {
		t.Fatalf("Quit called %d times, want 1", quits.Load())
	}
	checkRestored(t, out.String())
	close(snapshots) // the engine closes its channel after Quit; the pending wait must not leak a panic
}

func TestRunReturnsTheContextError(t *testing.T) {
	in, _ := keyboard(t)
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	var quits atomic.Int32
	o := asciiOptions()
	o.Quit = func() { quits.Add(1) }
	result := runAsync(t, func() error { return Run(ctx, o, make(chan bench.Snapshot), in, out) })
	waitFor(t, out, "waiting for the first tick")
	cancel()
	if err := await(t, result); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if quits.Load() != 1 {
		t.Fatalf("Quit called %d times, want 1 (the engine must stop when the dashboard goes)", quits.Load())
	}
	checkRestored(t, out.String())
}

// panicky is the dashboard with a fault: it panics on the key x, in Update or in View.
type panicky struct {
	Model
	inView *bool
}

func (p panicky) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "x" {
		if p.inView != nil {
			*p.inView = true
			return p, nil
		}
		var strategies []bench.StrategySnapshot
		_ = strategies[3] // index out of range, as a real bug would
	}
	next, cmd := p.Model.Update(msg)
	p.Model = next.(Model)
	return p, cmd
}

func (p panicky) View() tea.View {
	if p.inView != nil && *p.inView {
		panic("boom in View")
	}
	return p.Model.View()
}

func TestPanicInTheModelRestoresTheTerminal(t *testing.T) {
	for _, where := range []string{"Update", "View"} {
		t.Run(where, func(t *testing.T) {
			in, keys := keyboard(t)
			out := &syncBuffer{}
			var quits atomic.Int32
			o := asciiOptions()
			o.Quit = func() { quits.Add(1) }
			m := panicky{Model: New(o)}
			if where == "View" {
				m.inView = new(bool)
			}
			result := runAsync(t, func() error { return run(context.Background(), m, in, out, o.Profile, o.Quit) })
			waitFor(t, out, "waiting for the first tick")
			if _, err := keys.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			err := await(t, result)
			if err == nil || !strings.Contains(err.Error(), "panic") {
				t.Fatalf("err = %v, want the panic as an error", err)
			}
			if quits.Load() != 1 {
				t.Fatalf("Quit called %d times, want 1", quits.Load())
			}
			checkRestored(t, out.String())
		})
	}
}
