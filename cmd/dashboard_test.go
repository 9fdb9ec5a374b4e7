package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/termtest"
)

// shell runs a limitctl command line in a terminal, saying its exit code when it ends and
// keeping the pane open to be read.
func shell(t *testing.T, width, height int, command string) *termtest.Term {
	t.Helper()
	return termtest.Start(t, width, height, command+"; echo EXIT=$?; sleep 30")
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
			m := shell(t, 120, 40, binary(t)+" --addr "+srv.Addr+" hammer --duration 60s --assert lua.overshoot==0")
			screen := m.WaitForText(15*time.Second, "naive", "lua", "OVERSHOOT", "exact", "RUNNING", "PASS lua.overshoot==0")
			if !strings.Contains(screen, "in-flight") {
				t.Errorf("panels lack the in-flight line:\n%s", screen)
			}
			m.Keys("p")
			m.WaitForText(5*time.Second, "PAUSED")
			m.Keys(tc.key)
			after := m.WaitForText(10*time.Second, tc.exit, "STRATEGY", tc.summary)
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
// run, the verdict words (OVERSHOOT red, exact green). NO_COLOR or --no-color: not one escape
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
			m := shell(t, 120, 40, "TERM=xterm-256color "+tc.env+binary(t)+tc.flag+" --addr "+srv.Addr+" hammer --duration 60s")
			m.WaitForText(15*time.Second, "OVERSHOOT", "exact")
			dashboard := m.Run("capture-pane", "-p", "-e")
			m.Keys("q")
			m.WaitForText(10*time.Second, "EXIT=")
			summary := m.Run("capture-pane", "-p", "-e")
			if !tc.colour {
				if strings.Contains(dashboard+summary, "\x1b[") {
					t.Errorf("escape sequences with %s:\n%q\n%q", tc.name, dashboard, summary)
				}
				return
			}
			if !strings.Contains(dashboard, "\x1b[38;5;203m") {
				t.Errorf("the overshooting panel is not red (38;5;203):\n%q", dashboard)
			}
			for _, want := range []string{"\x1b[31mOVERSHOOT", "\x1b[32mexact"} {
				if !strings.Contains(summary, want) {
					t.Errorf("the verdict lines lack %q:\n%q", want, summary)
				}
			}
		})
	}
}
