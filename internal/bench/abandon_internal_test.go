package bench

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

// The edges of abandoned requests (Config.Abandon) in the refusal judge and the witness, one
// decision at a time, on the timelines of refusals_test.go (µs; stale-after 100ms).

// abandoned is an admitted concurrency request never released.
func abandoned(sent, replied int64) judgedCall {
	d := at(sent, replied, outAdmitted)
	d.Abandoned = true
	return d
}

// refusedAt is a refusal sent at sent (answered a millisecond later), stamped at stamp.
func refusedAt(sent, stamp int64) judgedCall {
	d := at(sent, sent+ms, outRefused)
	d.StampLo, d.StampHi = stamp, stamp
	return d
}

func TestHeldAbandonedRequestHoldsUntilStaleAfterThenIsReclaimable(t *testing.T) {
	spec := concurrency(2)
	live := held(0, 1*ms, time.Hour.Microseconds()) // held all along
	for _, c := range []struct {
		name        string
		sent, stamp int64
		blamed      bool
	}{
		{"within stale-after", 50 * ms, 50 * ms, false},
		{"stamped past it, sent within it", 101 * ms, 200 * ms, false},
		{"sent past it, stamped within it", 200 * ms, 101 * ms, false},
		{"past it on both, within the allowances", 102 * ms, 103 * ms, false},
		{"past it on both", 110 * ms, 110 * ms, true},
	} {
		r := judgeOnce(spec, live, abandoned(0, 1*ms), refusedAt(c.sent, c.stamp))
		if (r.count > 0) != c.blamed {
			t.Errorf("%s: false rejects %d, want blamed=%v", c.name, r.count, c.blamed)
			continue
		}
		if c.blamed {
			f := r.first
			if f.HeldOrAdmitted != 1 || f.AbandonedReclaimable == nil || *f.AbandonedReclaimable != 1 || f.Limit != 2 {
				t.Errorf("%s: evidence %+v, want 1 held and 1 of the 2 abandoned more than stale-after ago", c.name, f)
			}
		}
	}
	// A script told no stale time (a plain semaphore) may hold an abandoned slot for ever.
	spec.rules.NoStaleAfter = true
	hour := time.Hour.Microseconds()
	if r := judgeOnce(spec, live, abandoned(0, 1*ms), refusedAt(hour, hour)); r.count != 0 {
		t.Errorf("a plain semaphore blamed for an abandoned slot it never reclaims")
	}
}

// The evidence names only as many abandoned requests as the limit leaves to them: the limiter
// counted limit members, of which at most held_or_admitted can rightly be held.
func TestHeldAbandonedReclaimableIsAtMostTheRoomLeft(t *testing.T) {
	r := judgeOnce(concurrency(2), abandoned(0, 1*ms), abandoned(1*ms, 2*ms), abandoned(2*ms, 3*ms), refusedAt(200*ms, 200*ms))
	if r.count != 1 || r.first.HeldOrAdmitted != 0 || *r.first.AbandonedReclaimable != 2 {
		t.Fatalf("three abandoned long ago, limit 2: got %d %+v, want 0 held and 2 abandoned", r.count, r.first)
	}
	// A refusal with room and no abandoned request behind it says so: 0.
	r = judgeOnce(concurrency(2), held(0, 1*ms, 50*ms), refusedAt(10*ms, 10*ms))
	if r.count != 1 || r.first.AbandonedReclaimable == nil || *r.first.AbandonedReclaimable != 0 {
		t.Fatalf("a refusal with room, nothing abandoned: got %d %+v", r.count, r.first)
	}
	// The windows and the bucket hold nothing to abandon: no such field.
	r = judgeOnce(window(limiter.SlidingWindow, 2), at(0, 1*ms, outAdmitted), at(10*ms, 11*ms, outRefused))
	if r.count != 1 || r.first.AbandonedReclaimable != nil {
		t.Fatalf("a window's false reject: %d %+v", r.count, r.first)
	}
}

// An abandoned request forgotten once it is reclaimed for every later refusal is still named in
// the evidence of those refusals.
func TestHeldAbandonedRequestForgottenStillCounts(t *testing.T) {
	r := newRefusals(concurrency(2))
	r.record(abandoned(0, 1*ms))
	r.record(abandoned(1*ms, 2*ms))
	r.judge(300 * ms) // nothing to judge; settles: both are reclaimed for any refusal from here on
	if j := r.kind.(*heldJudge); len(j.open) != 0 || j.reclaimedGone != 2 {
		t.Fatalf("settled: %d kept, %d forgotten; want 0 and 2", len(j.open), j.reclaimedGone)
	}
	r.record(refusedAt(400*ms, 400*ms))
	r.judge(forever)
	if r.count != 1 || *r.first.AbandonedReclaimable != 2 {
		t.Fatalf("got %d %+v, want a false reject naming 2 abandoned", r.count, r.first)
	}
}

// Given stale-after in seconds, a script may round it up to whole seconds: 1.5s may be 2s,
// while a whole second stays one.
func TestHeldAbandonedStaleAfterInSecondsRoundsUp(t *testing.T) {
	for _, c := range []struct {
		stale  time.Duration
		sent   int64
		blamed bool
		name   string
	}{
		{1500 * time.Millisecond, 1900 * ms, false, "1.5s, refused at 1.9s: may be 2s"},
		{1500 * time.Millisecond, 2010 * ms, true, "1.5s, refused at 2.01s"},
		{time.Second, 1010 * ms, true, "1s, refused at 1.01s"},
	} {
		spec := concurrency(1)
		spec.staleAfter, spec.rules.StaleUnit = c.stale.Microseconds(), time.Second
		if r := judgeOnce(spec, abandoned(0, 1*ms), refusedAt(c.sent, c.sent)); (r.count > 0) != c.blamed {
			t.Errorf("%s: false rejects %d, want blamed=%v", c.name, r.count, c.blamed)
		}
	}
}

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
		if got := WitnessStale(c.stale, c.quantum, RefusalRules{StaleUnit: c.unit}); got != c.want {
			t.Errorf("stale %s quantum %s unit %s: %s, want %s", c.stale, c.quantum, c.unit, got, c.want)
		}
	}
}

// Each worker abandons its share of its admits exactly, evenly spaced, from a phase of its own.
func TestAbandonsAreEvenlySpacedPerWorker(t *testing.T) {
	s := newStrategyState(Config{Abandon: 0.25, Workers: 8, KeyCount: 1, KeyFor: func(string, int) string { return "k" },
		Limiter: limiter.Concurrency, Limit: 1}, StrategyRun{Name: "lua"})
	firsts := map[int]bool{}
	for w := 0; w < 8; w++ {
		var at []int
		for i := 0; i < 400; i++ {
			if s.abandons(w) {
				at = append(at, i)
			}
		}
		if len(at) < 99 || len(at) > 100 {
			t.Fatalf("worker %d abandoned %d of 400 admits, want 100", w, len(at))
		}
		for i := 1; i < len(at); i++ {
			if at[i]-at[i-1] != 4 {
				t.Fatalf("worker %d: abandons at %v, not every 4th", w, at[:min(len(at), 10)])
			}
		}
		firsts[at[0]] = true
	}
	if len(firsts) < 3 {
		t.Errorf("the workers' first abandons fall on %d admits of 4: not spread", len(firsts))
	}
	if s := newStrategyState(Config{Workers: 1, KeyCount: 1, KeyFor: func(string, int) string { return "k" }, Limiter: limiter.Concurrency, Limit: 1},
		StrategyRun{Name: "lua"}); s.abandons(0) {
		t.Error("abandoned with Abandon 0")
	}
}
