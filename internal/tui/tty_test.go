package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/termtest"
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
	opts := Options{Quit: cancel, Controls: &fakeControls{}, Profile: colorprofile.ASCII, Verdict: verdict.InSnapshot}
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
			tm := termtest.Start(t, 80, 24, script)

			stacked := tm.WaitFor(15*time.Second, "two stacked panels", func(s string) bool {
				rows, perLine := topBorders(s)
				return rows == 2 && perLine == 1 && strings.Contains(s, "OVERSHOOT")
			})
			if !strings.Contains(stacked, "exact") {
				t.Errorf("lua's panel missing:\n%s", stacked)
			}

			tm.Resize(160, 48)
			tm.WaitFor(15*time.Second, "panels side by side after the resize", func(s string) bool {
				rows, perLine := topBorders(s)
				return rows == 1 && perLine == 2
			})

			tm.Keys(tc.key)
			after := tm.WaitFor(15*time.Second, "the shell after the dashboard", func(s string) bool {
				return strings.Contains(s, "finished")
			})
			if !strings.Contains(after, tc.returned) {
				t.Errorf("want %q on the normal screen, got:\n%s", tc.returned, after)
			}
			// (tmux may keep alternate-screen lines beyond the old height after a resize, so
			// ask it whether the alternate screen is still on rather than look for panels.)
			if tm.AltScreen() {
				t.Errorf("alternate screen still on after exit")
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
