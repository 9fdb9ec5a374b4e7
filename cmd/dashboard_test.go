package cmd

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// tmux drives a private tmux server (its own socket) as a person at a terminal would.
type tmux struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, width, height int, command string) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not on PATH (make test installs it): the dashboard must be driven in a real terminal")
	}
	m := &tmux{t: t, socket: fmt.Sprintf("limitctl-test-%d", time.Now().UnixNano())}
	m.run("new-session", "-d", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), command+"; echo EXIT=$?; sleep 30")
	t.Cleanup(func() { exec.Command("tmux", "-L", m.socket, "kill-server").Run() })
	return m
}

func (m *tmux) run(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", m.socket}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (m *tmux) screen() string { return m.run("capture-pane", "-p") }

// waitFor polls the screen until every fragment is on it.
func (m *tmux) waitFor(limit time.Duration, fragments ...string) string {
	m.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := m.screen()
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(s, f)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("after %s the screen lacks %q:\n%s", limit, fragments, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestDashboardInARealTerminalShowsPanelsAndQuitsCleanly(t *testing.T) {
	srv := redistest.Start(t)
	m := newTmux(t, 120, 40, binary(t)+" --addr "+srv.Addr+" hammer --duration 60s --assert lua.overshoot==0")
	screen := m.waitFor(15*time.Second, "naive", "lua", "OVERSHOOT +", "0 overshoot", "RUNNING", "PASS lua.overshoot==0")
	if !strings.Contains(screen, "in-flight") {
		t.Errorf("panels lack the in-flight line:\n%s", screen)
	}
	m.run("send-keys", "p")
	m.waitFor(5*time.Second, "PAUSED")
	m.run("send-keys", "q")
	after := m.waitFor(10*time.Second, "EXIT=130", "STRATEGY", "(interrupted)")
	// The alternate screen is gone: the summary sits on the normal screen with the command line.
	if strings.Contains(after, "RUNNING") || strings.Contains(after, "PAUSED") {
		t.Errorf("the dashboard is still on screen after q:\n%s", after)
	}
}
