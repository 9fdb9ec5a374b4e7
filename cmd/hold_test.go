package cmd

import (
	"context"
	"testing"
	"time"
)

// hammerOptionsFor parses hammer flags through the runF seam, without a server.
func hammerOptionsFor(t *testing.T, args ...string) *hammerOptions {
	t.Helper()
	streams, _, _, errOut := TestStreams()
	f := NewFactory(streams, Build{Version: "test"})
	f.Getenv = func(string) string { return "" }
	var got *hammerOptions
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "hammer" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newHammerCmd(f, func(_ context.Context, _ *Factory, o *hammerOptions) error { got = o; return nil }))
	if code := runRoot(context.Background(), f, root, append([]string{"hammer"}, args...)); code != ExitOK || got == nil {
		t.Fatalf("hammer %v: exit %d; stderr %s", args, code, errOut)
	}
	return got
}

// --hold is a slot's hold for the concurrency limiter only: window and bucket limiters have no
// slot, so they default to no pause after an admit, and a given --hold is a think time there.
func TestHoldDefaultsPerLimiter(t *testing.T) {
	for _, c := range []struct {
		args []string
		hold time.Duration
	}{
		{nil, 2 * time.Millisecond},
		{[]string{"--limiter", "concurrency"}, 2 * time.Millisecond},
		{[]string{"--limiter", "fixed-window"}, 0},
		{[]string{"--limiter", "sliding-window"}, 0},
		{[]string{"--limiter", "token-bucket"}, 0},
		{[]string{"--limiter", "fixed-window", "--hold", "5ms"}, 5 * time.Millisecond},
		{[]string{"--limiter", "concurrency", "--hold", "0"}, 0},
	} {
		o := hammerOptionsFor(t, c.args...).run
		if o.Hold != c.hold {
			t.Errorf("hammer %v: hold %s, want %s", c.args, o.Hold, c.hold)
		}
	}
	// The concurrency default still sets the reclaim horizon: max(10s, 100 x hold).
	if o := hammerOptionsFor(t, "--hold", "200ms").run; o.StaleAfter != 20*time.Second {
		t.Errorf("stale-after %s, want 20s", o.StaleAfter)
	}
}
