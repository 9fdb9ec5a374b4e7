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

func TestDashboardInARealTerminalShowsPanelsAndQuitsCleanly(t *testing.T) {
	srv := redistest.Start(t)
	m := shell(t, 120, 40, binary(t)+" --addr "+srv.Addr+" hammer --duration 60s --assert lua.overshoot==0")
	screen := m.WaitForText(15*time.Second, "naive", "lua", "OVERSHOOT +", "0 overshoot", "RUNNING", "PASS lua.overshoot==0")
	if !strings.Contains(screen, "in-flight") {
		t.Errorf("panels lack the in-flight line:\n%s", screen)
	}
	m.Keys("p")
	m.WaitForText(5*time.Second, "PAUSED")
	m.Keys("q")
	after := m.WaitForText(10*time.Second, "EXIT=130", "STRATEGY", "(interrupted)")
	// The alternate screen is gone: the summary sits on the normal screen with the command line.
	if strings.Contains(after, "RUNNING") || strings.Contains(after, "PAUSED") {
		t.Errorf("the dashboard is still on screen after q:\n%s", after)
	}
}
