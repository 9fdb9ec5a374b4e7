package overshoot

import (
	"math/rand/v2"
	"testing"

	"github.com/limitctl/limitctl/internal/evidence"
)

// bursts admits n requests at each of the given times (ms), spread over spreadMs by a fixed
// pseudo-random sequence, as a contended limiter admits a window's worth at its start.
func bursts(c Checker, starts []int64, n int, spreadMs int64, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	for _, at := range starts {
		for i := 0; i < n; i++ {
			c.Admit(evidence.Decision{AtMs: at + r.Int64N(spreadMs+1)}, nothing)
		}
	}
}

// every is count times from start, gap ms apart.
func every(start, gap int64, count int) []int64 {
	out := make([]int64, count)
	for i := range out {
		out[i] = start + int64(i)*gap
	}
	return out
}

func caughtFrom(t *testing.T, c Checker, limit int64) (int64, bool) {
	t.Helper()
	c.Finish()
	return c.CaughtFrom(2 * limit)
}

func TestWitnessPowerIsHowFarItsPeakStayedBelowTheLimit(t *testing.T) {
	w := NewWitness(20, 1000)
	for id := uint64(1); id <= 18; id++ {
		w.AdmitHeld(id, 100, 100)
	}
	if k, ok := caughtFrom(t, w, 20); !ok || k != 3 {
		t.Errorf("18 held at most, limit 20: caught from %d (%v), want 3 (20+3 would have been 21)", k, ok)
	}
	for id := uint64(19); id <= 25; id++ {
		w.AdmitHeld(id, 100, 100)
	}
	if k, ok := caughtFrom(t, w, 20); !ok || k != 1 {
		t.Errorf("an overshoot seen: caught from %d (%v), want 1", k, ok)
	}
}

// A contended window that reached its limit in every window would have shown one more; one
// that reached only 15 of 20 (the rest left out of the evidence) would have needed six more.
func TestWindowPowerFollowsWhatEachWindowHeld(t *testing.T) {
	for _, aligned := range []bool{true, false} {
		// Bursts a little more than a window apart: a sliding window's limit holds between them.
		full := NewSlidingChecker(20, 1000, 100, aligned)
		bursts(full, every(10_000, 1010, 8), 20, 5, 1)
		if k, ok := caughtFrom(t, full, 20); !ok || k != 1 {
			t.Errorf("aligned %v, 20 in every window: caught from %d (%v), want 1", aligned, k, ok)
		}
		thin := NewSlidingChecker(20, 1000, 100, aligned)
		bursts(thin, every(10_000, 1010, 8), 15, 5, 2)
		if k, ok := caughtFrom(t, thin, 20); !ok || k != 6 {
			t.Errorf("aligned %v, 15 in every window: caught from %d (%v), want 6", aligned, k, ok)
		}
	}
}

// The power is that of a correct limiter's evidence under the same load, whatever the run's own
// admits: a limiter that admitted twice its limit without the evidence proving it used up the
// room the allowances leave, and phantoms on top of it would prove an overshoot sooner than
// they would on a correct one's, overstating the power. Thinned first, both state the same.
func TestPowerOfAnUnprovenOvershootIsACorrectLimitersPower(t *testing.T) {
	const limit, window = 20, 1000
	for _, late := range []int64{13, 411} {
		// Windows opened by the first hit, back to back: 20 of them at a small lateness, where
		// the evidence is sharp once past the first few, 5 at a wide one.
		starts := every(50_000, 1003, 20)
		if late > 100 {
			starts = starts[:5]
		}
		correct := NewUnalignedChecker(limit, window, late, 3000)
		bursts(correct, starts, limit, 2*late/3, 3)
		doubled := NewUnalignedChecker(limit, window, late, 3000)
		bursts(doubled, starts, 2*limit, 2*late/3, 3)
		kc, okc := caughtFrom(t, correct, limit)
		kd, okd := caughtFrom(t, doubled, limit)
		t.Logf("lateness %dms: correct caught from %d (%v), doubled (overshoot %d) caught from %d (%v)",
			late, kc, okc, doubled.Result().Overshoot, kd, okd)
		if doubled.Result().Overshoot == 0 && okd && kd <= limit {
			t.Errorf("lateness %dms: twice the limit went unproven, yet the power claims +%d would have been proven", late, kd)
		}
		if late == 13 && (!okc || kc > 2) {
			t.Errorf("lateness 13ms, tight bursts: caught from %d (%v), want at most 2", kc, okc)
		}
		if late == 411 && okc && kc < limit {
			t.Errorf("lateness 411ms over 5 windows: caught from %d, want the limit or more (no power)", kc)
		}
	}
}

func TestBucketPowerOfAContendedBucket(t *testing.T) {
	b := NewBucketChecker(20, 20, 1, 100) // 20 a second, burst 20
	// A full burst at once, then one every 50ms: what a correct contended bucket admits.
	bursts(b, []int64{1_000}, 20, 0, 4)
	for at := int64(1_050); at < 6_000; at += 50 {
		b.AdmitMs(at)
	}
	if k, ok := caughtFrom(t, b, 20); !ok || k != 1 {
		t.Errorf("a contended bucket: caught from %d (%v), want 1", k, ok)
	}
	if r := b.Result(); r.Overshoot != 0 {
		t.Fatalf("the correct history was blamed: %+v", r)
	}
}

func TestSmallestProvenBisects(t *testing.T) {
	for _, want := range []int64{1, 2, 3, 7, 8, 40} {
		calls := 0
		k, ok := smallestProven(40, func(k int64) bool { calls++; return k >= want })
		if !ok || k != want {
			t.Errorf("want %d: got %d (%v)", want, k, ok)
		}
		if calls > 12 {
			t.Errorf("want %d: %d calls", want, calls)
		}
	}
	if _, ok := smallestProven(40, func(int64) bool { return false }); ok {
		t.Error("nothing proven: ok")
	}
}
