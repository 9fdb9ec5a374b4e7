package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/bench"
)

// demoEnv makes the test binary run the dashboard on synthetic snapshots instead of the
// tests, so a real terminal (tmux) can drive it: "run" or "panic" (the model panics on x).
const demoEnv = "LIMITCTL_TUI_DEMO"

func TestMain(m *testing.M) {
	if mode := os.Getenv(demoEnv); mode != "" {
		os.Exit(demo(mode))
	}
	os.Exit(m.Run())
}

// demo runs the dashboard on this process's terminal until q, like the hammer will.
func demo(mode string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := Options{Quit: cancel, Controls: &fakeControls{}, Profile: colorprofile.ASCII}
	snapshots := make(chan bench.Snapshot)
	go func() {
		defer close(snapshots)
		for _, s := range fixtureRun(1000, naiveShape, luaShape) {
			select {
			case snapshots <- s:
			case <-ctx.Done():
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var err error
	if mode == "panic" {
		m := New(opts)
		m.snapshots = snapshots
		err = run(ctx, panicky{Model: m}, os.Stdin, os.Stdout, opts.Profile, opts.Quit)
	} else {
		err = Run(ctx, opts, snapshots, os.Stdin, os.Stdout)
	}
	fmt.Printf("dashboard returned: %v\n", firstLine(err))
	return 0
}

func firstLine(err error) string {
	if err == nil {
		return "<nil>"
	}
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}

// tmuxTerm is a tmux server of the test's own, so no user's session is touched.
type tmuxTerm struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, w, h int, command string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux not on PATH: the real-terminal test must run in CI (make test installs tmux)")
		}
		t.Skip("tmux not on PATH: skipping the real-terminal test")
	}
	// One server per call: a socket named by the pid alone was still held by the previous
	// subtest's server, being killed, when the next one asked for a session on it.
	tm := &tmuxTerm{t: t, socket: fmt.Sprintf("limitctl-tui-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	tm.run("new-session", "-d", "-s", "dash", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tm *tmuxTerm) screen() string { return tm.run("capture-pane", "-p", "-t", "dash") }

// waitFor polls the screen until ok says yes, and returns that screen.
func (tm *tmuxTerm) waitFor(what string, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("terminal never showed %s; it shows:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Drive the dashboard in a real terminal: panels appear, follow a resize, q leaves the
// alternate screen and the terminal's modes are as they were (stty before == after).
func TestDashboardInARealTerminal(t *testing.T) {
	for _, tc := range []struct {
		mode, key, returned string
	}{
		{"run", "q", "dashboard returned: <nil>"},
		{"panic", "x", "dashboard returned: dashboard: panic:"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf(`stty -g > %[1]s/before; %[2]s=%[3]s %[4]s -test.run='^$'; stty -g > %[1]s/after; echo finished; sleep 60`,
				dir, demoEnv, tc.mode, self)
			tm := newTmux(t, 80, 24, script)

			stacked := tm.waitFor("two stacked panels", func(s string) bool {
				rows, perLine := topBorders(s)
				return rows == 2 && perLine == 1 && strings.Contains(s, "OVERSHOOT +")
			})
			if !strings.Contains(stacked, "0 overshoot") {
				t.Errorf("lua's panel missing:\n%s", stacked)
			}

			tm.run("resize-window", "-t", "dash", "-x", "160", "-y", "48")
			tm.waitFor("panels side by side after the resize", func(s string) bool {
				rows, perLine := topBorders(s)
				return rows == 1 && perLine == 2
			})

			tm.run("send-keys", "-t", "dash", tc.key)
			after := tm.waitFor("the shell after the dashboard", func(s string) bool {
				return strings.Contains(s, "finished")
			})
			if !strings.Contains(after, tc.returned) {
				t.Errorf("want %q on the normal screen, got:\n%s", tc.returned, after)
			}
			// (tmux may keep alternate-screen lines beyond the old height after a resize, so
			// ask it whether the alternate screen is still on rather than look for panels.)
			if alt := strings.TrimSpace(tm.run("display-message", "-p", "-t", "dash", "#{alternate_on}")); alt != "0" {
				t.Errorf("alternate screen still on after exit (alternate_on=%s)", alt)
			}
			before, errB := os.ReadFile(filepath.Join(dir, "before"))
			restored, errA := os.ReadFile(filepath.Join(dir, "after"))
			if errB != nil || errA != nil {
				t.Fatalf("stty output missing: %v %v", errB, errA)
			}
			if string(before) != string(restored) {
				t.Errorf("terminal modes not restored:\nbefore %s\nafter  %s", before, restored)
			}
		})
	}
}
