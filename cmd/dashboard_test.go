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

// q ends the run early as the user asked: the summary and the exit code its verdict and
// assertions give (0 here), not an interruption. Ctrl-C interrupts: partial summary, exit 130.
func TestDashboardInARealTerminalShowsPanelsAndQuitsCleanly(t *testing.T) {
	srv := redistest.Start(t)
	for _, tc := range []struct{ key, exit, summary string }{
		{"q", "EXIT=0", "PASS  lua.overshoot==0"},
		{"C-c", "EXIT=130", "(interrupted)"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			m := newTmux(t, 120, 40, binary(t)+" --addr "+srv.Addr+" hammer --duration 60s --assert lua.overshoot==0")
			screen := m.waitFor(15*time.Second, "naive", "lua", "OVERSHOOT +", "0 overshoot", "RUNNING", "PASS lua.overshoot==0")
			if !strings.Contains(screen, "in-flight") {
				t.Errorf("panels lack the in-flight line:\n%s", screen)
			}
			m.run("send-keys", "p")
			m.waitFor(5*time.Second, "PAUSED")
			m.run("send-keys", tc.key)
			after := m.waitFor(10*time.Second, tc.exit, "STRATEGY", tc.summary)
			// The alternate screen is gone: the summary sits on the normal screen with the command line.
			if strings.Contains(after, "RUNNING") || strings.Contains(after, "PAUSED") {
				t.Errorf("the dashboard is still on screen after %s:\n%s", tc.key, after)
			}
			if tc.key == "q" && strings.Contains(after, "interrupted") {
				t.Errorf("q is not an interruption:\n%s", after)
			}
		})
	}
}

// Colour on a colour terminal: the overshooting panel in red (256-colour 203) and, after the
// run, the verdict words (OVERSHOOT red, held green). NO_COLOR or --no-color: not one escape
// on the pane, the dashboard's or the summary's. (Piped output has none either:
// TestHammerProgressLinesWithoutATerminalHaveNoEscapes.)
func TestColourOnAColourTerminalAndNoneWhenAsked(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name, env, flag string
		colour          bool
	}{
		{"colour terminal", "", "", true},
		{"NO_COLOR", "NO_COLOR=1 ", "", false},
		{"--no-color", "", " --no-color", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTmux(t, 120, 40, "TERM=xterm-256color "+tc.env+binary(t)+tc.flag+" --addr "+srv.Addr+" hammer --duration 60s")
			m.waitFor(15*time.Second, "OVERSHOOT +", "0 overshoot")
			dashboard := m.run("capture-pane", "-p", "-e")
			m.run("send-keys", "q")
			m.waitFor(10*time.Second, "EXIT=")
			summary := m.run("capture-pane", "-p", "-e")
			if !tc.colour {
				if strings.Contains(dashboard+summary, "\x1b[") {
					t.Errorf("escape sequences with %s:\n%q\n%q", tc.name, dashboard, summary)
				}
				return
			}
			if !strings.Contains(dashboard, "\x1b[38;5;203m") {
				t.Errorf("the overshooting panel is not red (38;5;203):\n%q", dashboard)
			}
			for _, want := range []string{"\x1b[31mOVERSHOOT", "\x1b[32mheld"} {
				if !strings.Contains(summary, want) {
					t.Errorf("the verdict lines lack %q:\n%q", want, summary)
				}
			}
		})
	}
}
