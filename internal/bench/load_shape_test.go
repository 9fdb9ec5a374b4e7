package bench

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

// The idle spells between bursts vary in length.
func TestIdleSpellsVaryInLength(t *testing.T) {
	cfg := Config{Profile: limiter.ProfileBursty, Window: time.Second}
	var spells []time.Duration
	for elapsed := time.Duration(0); elapsed < 25*time.Second; elapsed += time.Millisecond {
		if until, idle := idleSpell(cfg, elapsed); idle {
			spells = append(spells, until-elapsed)
			elapsed = until - time.Millisecond
		}
	}
	want := []time.Duration{1300, 1100, 1600, 1200, 2200, 1800, 1300}
	if len(spells) != len(want) {
		t.Fatalf("spells %v, want %v ms", spells, want)
	}
	for i := range want {
		if spells[i] != want[i]*time.Millisecond {
			t.Errorf("spell %d lasts %s, want %dms", i+1, spells[i], want[i])
		}
	}
}

func TestDefaultSkewReordersEveryLimiter(t *testing.T) {
	for _, c := range []struct {
		kind   limiter.Kind
		limit  int64
		window time.Duration
		want   time.Duration
	}{
		{limiter.Concurrency, 20, time.Second, 5 * time.Millisecond},
		{limiter.FixedWindow, 20, time.Second, 5 * time.Millisecond},
		{limiter.SlidingWindow, 20, time.Second, 5 * time.Millisecond},
		{limiter.TokenBucket, 20, time.Second, 3125 * time.Microsecond}, // a 16th of 50ms a token
		{limiter.TokenBucket, 40, time.Second, 1562500},                 // a 16th of 25ms
		{limiter.TokenBucket, 1000, time.Second, time.Millisecond},      // at least a millisecond
		{limiter.TokenBucket, 2, time.Second, 5 * time.Millisecond},     // at most 5ms
	} {
		if got := limiter.DefaultSkew(c.kind, c.limit, c.window); got != c.want {
			t.Errorf("%s limit %d per %s: skew %s, want %s", c.kind, c.limit, c.window, got, c.want)
		}
	}
}
