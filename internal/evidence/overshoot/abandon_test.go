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

// A request its client still holds counts for stale-after whatever the script's clock unit:
// a limiter on whole seconds given a stale time of one second drops it at the next second
// boundary while it runs, and the requests admitted in its place run beside it. An abandoned
// request counts only as long as such a limiter must remember it.
func TestWitnessCountsARunningRequestPastItsClocksUnit(t *testing.T) {
	live, abandoned := WitnessLive(time.Second, time.Second), WitnessStale(time.Second, time.Second, time.Second)
	if live != 998*time.Millisecond || abandoned != time.Millisecond {
		t.Fatalf("stale-after 1s on whole seconds: live %s, abandoned %s; want 998ms and 1ms", live, abandoned)
	}
	w := NewWitness(2, abandoned.Milliseconds())
	w.CountLiveFor(live.Milliseconds())
	w.AdmitHeld(1, 1_000, 1_000)
	w.AdmitHeld(2, 1_200, 1_200)
	w.AdmitHeld(3, 1_500, 1_500) // all three still run, 0.5s apart: one too many
	if got := w.Result(); got.Overshoot != 1 {
		t.Fatalf("three running within stale-after, limit 2: got %+v, want overshoot 1", got)
	}
	w = NewWitness(2, abandoned.Milliseconds())
	w.CountLiveFor(live.Milliseconds())
	w.AdmitHeld(1, 1_000, 1_000)
	w.AbandonHeld(1)
	w.AdmitHeld(2, 1_200, 1_200)
	w.AdmitHeld(3, 1_500, 1_500) // the abandoned one may rightly be gone at the second's turn
	if got := w.Result(); got.Overshoot != 0 {
		t.Fatalf("one abandoned 0.5s ago on whole seconds and two running, limit 2: got %+v, want no overshoot", got)
	}
	if got := WitnessLive(2*time.Second, 0); got != 1997*time.Millisecond {
		t.Errorf("WitnessLive(2s) = %s, want 1.997s (the server clock's 0.1%% and 1ms)", got)
	}
}
