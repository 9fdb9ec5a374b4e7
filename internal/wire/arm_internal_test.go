package wire

import (
	"context"
	"testing"
	"time"
)

// A deadline is armed again only when it would fall sooner than the timeout, and then lands at
// most 1% past it; a context's sooner deadline is armed exactly; no timeout arms none.
func TestDeadlinesAreArmedOnlyWhenTheyWouldFallShort(t *testing.T) {
	var armed []time.Time
	set := func(d time.Time) error { armed = append(armed, d); return nil }
	var cur time.Time
	t0 := time.Unix(1000, 0)
	ctx := context.Background()
	if err := arm(set, &cur, ctx, t0, time.Second); err != nil || len(armed) != 1 || !armed[0].Equal(t0.Add(1010*time.Millisecond)) {
		t.Fatalf("first: armed %v, want once at +1.01s", armed)
	}
	for _, after := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond} {
		arm(set, &cur, ctx, t0.Add(after), time.Second)
	}
	if len(armed) != 1 {
		t.Fatalf("within 10ms of the last arming: armed %d times, want the deadline kept", len(armed))
	}
	arm(set, &cur, ctx, t0.Add(11*time.Millisecond), time.Second)
	if len(armed) != 2 || !armed[1].Equal(t0.Add(1021*time.Millisecond)) {
		t.Fatalf("11ms later the kept deadline would fall 1ms short: armed %v", armed)
	}
	dctx, cancel := context.WithDeadline(ctx, t0.Add(200*time.Millisecond))
	defer cancel()
	arm(set, &cur, dctx, t0.Add(12*time.Millisecond), time.Second)
	if len(armed) != 3 || !armed[2].Equal(t0.Add(200*time.Millisecond)) {
		t.Fatalf("a context deadline sooner than the timeout: armed %v, want it exactly", armed)
	}
	arm(set, &cur, ctx, t0.Add(13*time.Millisecond), time.Second)
	if len(armed) != 4 || !armed[3].Equal(t0.Add(1023*time.Millisecond)) {
		t.Fatalf("back to the timeout after a context's deadline: armed %v", armed)
	}
	arm(set, &cur, ctx, t0.Add(14*time.Millisecond), 0)
	arm(set, &cur, ctx, t0.Add(15*time.Millisecond), -1)
	if len(armed) != 5 || !armed[4].IsZero() {
		t.Fatalf("no timeout: armed %v, want the deadline cleared once", armed)
	}
}
