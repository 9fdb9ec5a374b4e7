// Package termtest drives a program in a real terminal for tests, as a person would: a tmux
// server of the test's own (its own socket, so no user's session is touched), a session of a
// given size, keys sent, the screen read.
package termtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/orphan"
)

// Term is one terminal running a command.
type Term struct {
	t      testing.TB
	socket string
}

const session = "term"

// Start runs command (a shell line) in a width x height terminal, stopped when the test ends.
// tmux must be on PATH: make test installs it, and these tests exist to see a real terminal.
func Start(t testing.TB, width, height int, command string) *Term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not on PATH (make test installs it): this test must drive a real terminal")
	}
	sweepOnce.Do(func() { orphan.Sweep(os.TempDir(), socketPrefix, killServer) })
	// One server per terminal: a socket reused by the next test could still be held by the
	// previous one's server, being killed.
	name := orphan.Name(socketPrefix) + strconv.FormatInt(terminals.Add(1), 10)
	m := &Term{t: t, socket: filepath.Join(os.TempDir(), name)}
	m.Run("new-session", "-d", "-s", session, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), command)
	t.Cleanup(func() { killServer(m.socket) })
	return m
}

// socketPrefix starts the name of each terminal's tmux socket under os.TempDir(), followed by
// its test process's tag (orphan.Name): tmux runs as a daemon, so it outlives a killed test.
const socketPrefix = "limitctl-tmux-"

var (
	// sweepOnce has the first terminal of a test process end the tmux servers of dead ones.
	sweepOnce sync.Once
	// terminals counts this process's terminals, which name their sockets (a socket's path is
	// at most about 100 bytes).
	terminals atomic.Int64
)

// killServer ends the tmux server on socket and what runs in it (tmux hangs up on each pane).
func killServer(socket string) {
	exec.Command("tmux", "-S", socket, "kill-server").Run()
	os.Remove(socket)
}

// Run is a tmux command on the terminal's own server.
func (m *Term) Run(args ...string) string {
	m.t.Helper()
	out, err := m.capture(args...)
	if err != nil {
		m.t.Fatal(err)
	}
	return out
}

// Screen is what the terminal shows now.
func (m *Term) Screen() string { return m.Run("capture-pane", "-p", "-t", session) }

// Joined is the screen with wrapped lines joined back: a line longer than the terminal is
// wide comes back as one.
func (m *Term) Joined() string { return m.Run("capture-pane", "-p", "-J", "-t", session) }

// History is everything the terminal printed, the lines scrolled off the top included, with
// wrapped lines joined back as Joined does.
func (m *Term) History() string {
	return m.Run("capture-pane", "-p", "-J", "-S", "-", "-t", session)
}

// Keys types keys (tmux key names: q, C-c, Enter).
func (m *Term) Keys(keys ...string) { m.Run(append([]string{"send-keys", "-t", session}, keys...)...) }

// Resize makes the terminal width x height.
func (m *Term) Resize(width, height int) {
	m.Run("resize-window", "-t", session, "-x", strconv.Itoa(width), "-y", strconv.Itoa(height))
}

// AltScreen reports whether the program still holds the alternate screen.
func (m *Term) AltScreen() bool {
	return strings.TrimSpace(m.Run("display-message", "-p", "-t", session, "#{alternate_on}")) != "0"
}

// WaitFor polls the screen until ok says yes within limit, and returns that screen; what names
// the awaited sight for the failure.
func (m *Term) WaitFor(limit time.Duration, what string, ok func(screen string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(limit)
	last := ""
	for {
		s, err := m.capture("capture-pane", "-p", "-t", session)
		if err != nil {
			// The terminal is gone: what ran in it ended. What it printed last says why.
			m.t.Fatalf("the terminal closed before it showed %s (%v); it last showed:\n%s", what, err, last)
		}
		if ok(s) {
			return s
		}
		last = s
		if time.Now().After(deadline) {
			printed, err := m.capture("capture-pane", "-p", "-J", "-S", "-", "-t", session)
			if err != nil {
				printed = err.Error()
			}
			m.t.Fatalf("after %s the terminal never showed %s; it shows:\n%s\nand printed before that:\n%s",
				limit, what, s, printed)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// capture is a tmux command's output, or why it failed.
func (m *Term) capture(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-S", m.socket}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tmux %v: %v: %s", args, err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// WaitForText waits until every fragment is on the screen.
func (m *Term) WaitForText(limit time.Duration, fragments ...string) string {
	m.t.Helper()
	return m.WaitFor(limit, fmt.Sprintf("%q", fragments), func(s string) bool {
		for _, f := range fragments {
			if !strings.Contains(s, f) {
				return false
			}
		}
		return true
	})
}

// WaitForPrinted waits until every fragment has been printed, on the screen or scrolled off its
// top (a summary longer than the terminal is tall), and returns everything printed.
func (m *Term) WaitForPrinted(limit time.Duration, fragments ...string) string {
	m.t.Helper()
	m.WaitFor(limit, fmt.Sprintf("%q (on screen or above it)", fragments), func(string) bool {
		h, err := m.capture("capture-pane", "-p", "-J", "-S", "-", "-t", session)
		if err != nil {
			return false // the next screen's capture says the terminal closed
		}
		for _, f := range fragments {
			if !strings.Contains(h, f) {
				return false
			}
		}
		return true
	})
	return m.History()
}
