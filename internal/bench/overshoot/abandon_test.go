package overshoot

import (
	"testing"
	"time"
)

func TestWitnessCountsAbandonedRequestsUntilStaleAfter(t *testing.T) {
	w := NewWitness(2, 100)
	w.AdmitHeld(1, 1_000, 1_001)
	w.AbandonHeld(1)
	w.AdmitHeld(2, 1_050, 1_051)
	w.AdmitHeld(3, 1_060, 1_061) // the abandoned request still counts: the limiter must remember it
	if got := w.Result(); got.Overshoot != 1 || got.Peak != 3 {
		t.Fatalf("two held and one abandoned 60ms ago, limit 2: got %+v, want overshoot 1", got)
	}
	w = NewWitness(100, 100)
	for id := uint64(1); id <= 50; id++ {
		w.AdmitHeld(id, int64(id), int64(id))
		w.AbandonHeld(id)
	}
	w.AdmitHeld(100, 1_000, 1_000)
	w.AdmitHeld(101, 1_001, 1_001) // every abandoned request was decided stale-after ago
	if got := w.Result(); got.Peak != 50 || got.Current != 2 || len(w.abandoned) != 0 {
		t.Fatalf("abandoned long ago: got %+v with %d abandoned kept, want peak 50, 2 in flight, none kept", got, len(w.abandoned))
	}
	// Abandoned out of decision order (skewed clocks): forgotten by their own decision times.
	w = NewWitness(1, 100)
	w.AdmitHeld(1, 1_050, 1_050)
	w.AbandonHeld(1)
	w.AdmitHeld(2, 1_000, 1_050)
	w.AbandonHeld(2)
	w.AdmitHeld(3, 1_120, 1_120) // request 2 (decided at 1,000) is forgotten, request 1 is not
	if got := w.Result(); got.Overshoot != 1 || len(w.abandoned) != 1 || w.abandoned[0].id != 1 {
		t.Fatalf("got %+v, kept %+v; want overshoot 1 from request 1 and 3", got, w.abandoned)
	}
}

// The witness forgets an unreleased request sooner than stale-after by what a correct script
// may take off it.
func TestWitnessStaleAllowsForUnitQuantumAndTTL(t *testing.T) {
	for _, c := range []struct {
		stale, quantum time.Duration
		unit           time.Duration
		want           time.Duration
	}{
		{0, 0, 0, 0},
		{time.Second, time.Millisecond, 0, 998 * time.Millisecond},                          // the server clock's 0.1% and 1ms
		{1500 * time.Millisecond, time.Millisecond, time.Second, 997500 * time.Microsecond}, // 1.5s may be taken for 1s
		{2 * time.Second, time.Second, 0, 997 * time.Millisecond},                           // whole seconds compared
		{2 * time.Millisecond, time.Second, 0, time.Millisecond},                            // never below 1ms
	} {
		if got := WitnessStale(c.stale, c.quantum, c.unit); got != c.want {
			t.Errorf("stale %s quantum %s unit %s: %s, want %s", c.stale, c.quantum, c.unit, got, c.want)
		}
	}
}
