package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// press sends one key to the model.
func press(m Model, key string) Model {
	next, _ := m.Update(keyMsg(key))
	return next.(Model)
}

func keyMsg(key string) tea.KeyPressMsg {
	switch key {
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	r, _ := utf8.DecodeRuneInString(key)
	return tea.KeyPressMsg{Code: r, Text: key}
}

// isQuit reports whether a command is bubbletea's quit.
func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// q ends the run early as the user asked (Quit: judged as finished); Ctrl-C interrupts it
// (Interrupt: exit 130). Either is called once, however often the keys are pressed.
func TestQuitKeysStopTheRunOnce(t *testing.T) {
	for _, tc := range []struct{ key, want string }{{"q", "quit"}, {"ctrl+c", "interrupt"}} {
		t.Run(tc.key, func(t *testing.T) {
			var calls []string
			o := asciiOptions()
			o.Quit = func() { calls = append(calls, "quit") }
			o.Interrupt = func() { calls = append(calls, "interrupt") }
			m := feed(New(o), fixtureRun(5, naiveShape, luaShape)...)
			next, cmd := m.Update(keyMsg(tc.key))
			if !isQuit(cmd) {
				t.Fatalf("%s: want tea.Quit", tc.key)
			}
			// A second press of either key while bubbletea shuts down must not end it twice.
			next.(Model).Update(keyMsg("q"))
			next.(Model).Update(keyMsg("ctrl+c"))
			if len(calls) != 1 || calls[0] != tc.want {
				t.Fatalf("%s: calls %v, want [%s]", tc.key, calls, tc.want)
			}
		})
	}
}

func TestPauseTogglesAndTellsTheEngine(t *testing.T) {
	controls := &fakeControls{}
	o := asciiOptions()
	o.Controls = controls
	snaps := fixtureRun(6, naiveShape, luaShape)
	m := feed(New(o), snaps[:3]...)
	if m.Paused() || strings.Contains(m.View().Content, "PAUSED") {
		t.Fatal("paused before any key")
	}

	m = press(m, "p")
	if !m.Paused() || !strings.Contains(m.View().Content, "PAUSED") || !strings.Contains(m.View().Content, "p resume") {
		t.Fatalf("after p: want PAUSED and a resume hint\n%s", m.View().Content)
	}
	// A snapshot the engine took before it saw the request must not undo it on screen.
	m = feed(m, snaps[3])
	if !m.Paused() {
		t.Fatal("a stale unpaused snapshot resumed the dashboard")
	}

	m = press(m, "p")
	if m.Paused() || strings.Contains(m.View().Content, "PAUSED") {
		t.Fatal("after p p: still paused")
	}
	if got := controls.calls; len(got) != 2 || got[0] != true || got[1] != false {
		t.Fatalf("SetPaused calls = %v, want [true false]", got)
	}
}

func TestPauseWithoutControlsDoesNothing(t *testing.T) {
	m := press(feed(New(asciiOptions()), fixtureRun(3, luaShape)...), "p")
	if m.Paused() {
		t.Fatal("paused without Controls")
	}
	if strings.Contains(m.View().Content, "pause") {
		t.Fatal("footer offers pause without Controls")
	}
}

func TestEnginePausedSnapshotShowsPaused(t *testing.T) {
	snaps := fixtureRun(3, luaShape)
	snaps[2].Paused = true
	m := feed(New(asciiOptions()), snaps...)
	if !m.Paused() || !strings.Contains(m.View().Content, "PAUSED") {
		t.Fatal("a paused snapshot is not shown as PAUSED")
	}
}

func TestHelpToggles(t *testing.T) {
	m := feed(New(asciiOptions()), fixtureRun(3, naiveShape, luaShape)...)
	m = press(m, "?")
	if !m.HelpVisible() || !strings.Contains(m.View().Content, "pause / resume the load") {
		t.Fatalf("? did not show help\n%s", m.View().Content)
	}
	m = press(m, "?")
	if m.HelpVisible() || strings.Contains(m.View().Content, "pause / resume the load") {
		t.Fatal("? again did not hide help")
	}
	m = press(press(m, "?"), "esc")
	if m.HelpVisible() {
		t.Fatal("esc did not hide help")
	}
}

// topBorders counts panel top borders on each line of a view.
func topBorders(view string) (lines int, perLine int) {
	for _, l := range strings.Split(view, "\n") {
		if n := strings.Count(l, "╭─ "); n > 0 {
			lines++
			perLine = max(perLine, n)
		}
	}
	return lines, perLine
}

func TestResizeRelaysOut(t *testing.T) {
	m := feed(New(asciiOptions()), fixtureRun(20, naiveShape, luaShape)...)

	m = resize(m, 160, 48)
	if rows, perLine := topBorders(m.View().Content); rows != 1 || perLine != 2 {
		t.Fatalf("160x48: want 2 panels side by side, got %d rows of up to %d", rows, perLine)
	}
	checkFits(t, m.View().Content, 160, 48)

	m = resize(m, 80, 24)
	if rows, perLine := topBorders(m.View().Content); rows != 2 || perLine != 1 {
		t.Fatalf("80x24: want 2 panels stacked, got %d rows of up to %d", rows, perLine)
	}
	checkFits(t, m.View().Content, 80, 24)
}

// Every size from tiny to huge draws within the terminal and never panics.
func TestViewFitsEverySize(t *testing.T) {
	base := fixtureRun(30, naiveShape, strategyShape{name: "watch", errorRate: 0.02, retries: true}, luaShape)
	var eight []strategyShape
	for _, name := range []string{"naive", "multi", "watch", "lua", "eval", "function", "lua-ts-member", "custom"} {
		eight = append(eight, strategyShape{name: name, overshoot: name == "naive" || name == "multi"})
	}
	models := map[string]Model{
		"empty":   New(asciiOptions()),
		"running": feed(New(asciiOptions()), base...),
		"help":    press(feed(New(asciiOptions()), base...), "?"),
		"eight":   feed(New(asciiOptions()), fixtureRun(30, eight...)...),
	}
	wStep, hStep := 11, 6 // odd steps so the sweep crosses every layout threshold
	if testing.Short() {
		wStep, hStep = 23, 13 // a quarter of the sizes, still from tiny to huge
	}
	for name, m := range models {
		for w := 1; w <= 200; w += wStep {
			for h := 1; h <= 60; h += hStep {
				view := resize(m, w, h).View().Content
				lines := strings.Split(view, "\n")
				if len(lines) > h {
					t.Fatalf("%s %dx%d: %d lines", name, w, h, len(lines))
				}
				for _, l := range lines {
					if lipgloss.Width(l) > w {
						t.Fatalf("%s %dx%d: line %q is too wide", name, w, h, l)
					}
				}
			}
		}
	}
}

func TestNoColorDropsEveryEscape(t *testing.T) {
	colourful := func(noColor bool) string {
		o := asciiOptions()
		o.Profile = colorprofile.TrueColor
		if noColor {
			o.Profile = colorprofile.ASCII
		}
		return resize(feed(New(o), fixtureRun(20, naiveShape, luaShape)...), 100, 30).View().Content
	}
	if !strings.Contains(colourful(false), "\x1b[") {
		t.Fatal("a true-colour renderer drew no colour: the check below would prove nothing")
	}
	if view := colourful(true); strings.Contains(view, "\x1b[") {
		t.Fatal("NoColor view still has escape sequences")
	}
}
