package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

func TestWatchModelQuitsOnQAndInterruptsOnCtrlC(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	renders := 0
	m := newWatchModel(context.Background(), "limitctl inspect rl:*", time.Second, func() time.Time { return at },
		func(context.Context) (string, error) { renders++; return "KEY  SIZE\nrl:a 3\n", nil })
	frame := m.Init()()
	next, cmd := m.Update(frame)
	if cmd == nil {
		t.Fatal("no next tick after a frame")
	}
	m = next.(watchModel)
	view := m.View().Content
	for _, want := range []string{"Every 1s: limitctl inspect rl:*", "12:00:00", "(q quit)", "rl:a 3"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	// A failed refresh keeps the last table and shows the error under it.
	next, _ = m.Update(watchFrame{err: context.DeadlineExceeded, at: at})
	if v := next.(watchModel).View().Content; !strings.Contains(v, "rl:a 3") || !strings.Contains(v, "refresh failed") {
		t.Errorf("view after a failed refresh:\n%s", v)
	}
	if _, cmd := m.Update(watchTick{}); cmd == nil || renders != 1 {
		t.Errorf("a tick must ask for a refresh")
	}
	quit, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if _, ok := cmd().(tea.QuitMsg); !ok || quit.(watchModel).interrupted {
		t.Errorf("q must quit without interrupting")
	}
	stop, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if _, ok := cmd().(tea.QuitMsg); !ok || !stop.(watchModel).interrupted {
		t.Errorf("ctrl+c must quit as interrupted")
	}
}
