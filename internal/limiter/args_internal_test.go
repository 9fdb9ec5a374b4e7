package limiter

import (
	"reflect"
	"testing"
	"time"
)

// A batch reuses each call's lists round after round: a script's arguments for the same key in
// the same millisecond (a round's calls share one now) are those of a fresh call, and are
// written without allocating again (integers above 255 boxed anew would be, as would a fixed
// window's counter named anew). Only the token bucket's rate, a float written as text, is; and
// in a run each request's member is new, and allocated with its box.
func TestABatchsArgumentsAreThoseOfAFreshCallWithoutAllocating(t *testing.T) {
	cfg := Config{Limit: 1000, Window: 1500 * time.Millisecond, StaleAfter: 30 * time.Second, Rate: 20, Burst: 300, Cost: 1}
	now := time.UnixMilli(1_764_900_000_123)
	for _, d := range kinds {
		wantKeys, wantArgv := d.args(cfg, nil, nil, "bench:{k}", now, "member-1")
		keys, argv := d.args(cfg, nil, nil, "bench:{k}", now, "member-1")
		allocs := testing.AllocsPerRun(100, func() {
			keys, argv = d.args(cfg, keys, argv, "bench:{k}", now, "member-1")
		})
		if !reflect.DeepEqual(keys, wantKeys) || !reflect.DeepEqual(argv, wantArgv) {
			t.Fatalf("%s: reused lists %q %v, want %q %v", d.Kind, keys, argv, wantKeys, wantArgv)
		}
		want := 0.0
		if d.Kind == TokenBucket {
			want = 1 // the rate's text
		}
		if allocs != want {
			t.Errorf("%s: %v allocations a call on reused lists, want %v", d.Kind, allocs, want)
		}
	}
	// A later window names its own counter.
	keys, _ := fixedWindow.args(cfg, nil, nil, "bench:{k}", now, "")
	later := now.Add(cfg.Window)
	if got, _ := fixedWindow.args(cfg, keys, nil, "bench:{k}", later, ""); got[0] != WindowKey("bench:{k}", later, cfg.Window) {
		t.Fatalf("the next window's call named %q", got[0])
	}
}
