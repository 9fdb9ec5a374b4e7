package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/hammer"
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
	// The concurrency default still sets the reclaim horizon: 100 x hold, rounded up to a whole
	// second, at least 1s; and abandons as clients crash (no share given), which the windows do not.
	for _, c := range []struct {
		hold, stale string
		want        time.Duration
	}{{"200ms", "", 20 * time.Second}, {"2ms", "", time.Second}, {"0", "", time.Second}, {"15ms", "", 2 * time.Second},
		{"2ms", "300ms", 300 * time.Millisecond}} {
		args := []string{"--hold", c.hold}
		if c.stale != "" {
			args = append(args, "--stale-after", c.stale)
		}
		if o := hammerOptionsFor(t, args...).run; o.StaleAfter != c.want || o.StaleAfterGiven != (c.stale != "") || o.Abandon != 0 || o.AbandonGiven {
			t.Errorf("hammer %v: stale-after %s (given %v), abandon %g (given %v); want %s and crashes", args, o.StaleAfter, o.StaleAfterGiven, o.Abandon, o.AbandonGiven, c.want)
		}
		if got, want := hammer.DefaultCrashes(20, c.want), max(time.Second, 3*c.want); got.Every != want || got.Size != 10 {
			t.Errorf("crashes at stale-after %s: %+v, want every %s, 10 requests", c.want, got, want)
		}
	}
	if o := hammerOptionsFor(t, "--abandon", "0").run; o.Abandon != 0 {
		t.Errorf("--abandon 0: abandon %g", o.Abandon)
	}
	if o := hammerOptionsFor(t, "--limiter", "sliding-window").run; o.Abandon != 0 {
		t.Errorf("a sliding window abandons %g of its admits", o.Abandon)
	}
}
