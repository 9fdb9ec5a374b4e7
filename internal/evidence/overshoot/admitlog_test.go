package overshoot

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/limitctl/limitctl/internal/evidence/tally"
)

func TestWindowCheckersKeepOnlyMillisecondsWithAdmits(t *testing.T) {
	// A one-minute window, 20 admits a second: the history holds the admits of one window,
	// not sixty thousand milliseconds, and settling allocates nothing once warm.
	c := NewSlidingChecker(2000, 60_000, 6_000, false)
	const start = 1_700_000_000_000
	now := int64(start)
	step := func() { now += 50; c.AdmitMs(now) }
	for i := 0; i < 4000; i++ {
		step()
	}
	if allocs := testing.AllocsPerRun(2000, step); allocs != 0 {
		t.Fatalf("an admit allocated %.2f times, want 0", allocs)
	}
	c.log.mu.Lock()
	hist, pending := c.hist.Len(), c.log.pending.Len()
	c.log.mu.Unlock()
	if hist > 1200 || pending > 121 {
		t.Fatalf("history %d and pending %d entries; want at most a window's (1200) and a horizon's (121) admits", hist, pending)
	}
	if got := c.Finish(); got.Peak != 1200 || got.Overshoot != 0 {
		t.Fatalf("20/s in a 60s window: got %+v, want peak 1200 and no overshoot", got)
	}
}

// bruteWindow recounts every window from the whole admit list: the settled-order definition of
// peak and events that the checker computes incrementally.
func bruteWindow(admits []int64, limit, window int64, aligned bool) CheckResult {
	counts := map[int64]int64{}
	for _, ms := range admits {
		counts[ms]++
	}
	var res CheckResult
	var times []int64
	for ms := range counts {
		times = append(times, ms)
	}
	slices.Sort(times)
	for _, t := range times {
		var sum int64
		for _, u := range times {
			in := u <= t && u > t-window
			if aligned {
				in = u <= t && tally.FloorDiv(u, window) == tally.FloorDiv(t, window)
			}
			if in {
				sum += counts[u]
			}
		}
		res.Peak = max(res.Peak, sum)
		if sum > limit {
			res.OvershootEvent += min(counts[t], sum-limit)
		}
	}
	res.Overshoot = max(0, res.Peak-limit)
	return res
}

// bruteBucket tries every start millisecond of every interval.
func bruteBucket(admits []int64, burst int64, ratePerSec, slack float64) CheckResult {
	rate := ratePerSec / 1000
	counts := map[int64]int64{}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, ms := range admits {
		counts[ms]++
		lo, hi = min(lo, ms), max(hi, ms)
	}
	first := lo - 5
	prefix := make([]int64, hi-first+2) // prefix[i]: admits before first+i
	for u := first; u <= hi; u++ {
		prefix[u-first+1] = prefix[u-first] + counts[u]
	}
	var peak float64
	var events int64
	for t := lo; t <= hi; t++ {
		if counts[t] == 0 {
			continue
		}
		worst := math.Inf(-1)
		for t1 := first; t1 <= t; t1++ {
			n := prefix[t-first+1] - prefix[t1-first]
			worst = max(worst, float64(n)-rate*float64(t-t1))
		}
		peak = max(peak, worst)
		if over := int64(math.Ceil(worst - float64(burst) - slack - 1e-9)); over > 0 {
			events += min(counts[t], over)
		}
	}
	over := max(0, int64(math.Ceil(peak-float64(burst)-slack-1e-9)))
	p := max(int64(math.Floor(peak+1e-9)), burst+over)
	return CheckResult{Peak: p, Overshoot: over, OvershootEvent: events}
}

func TestCheckersMatchABruteForceCountWithOutOfOrderAdmits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const start = 1_700_000_000_000
	const horizon = 40
	for round := 0; round < 200; round++ {
		// Admits spread over 400ms in bursts, each recorded up to 30ms before a newer one
		// (within the horizon), as racing workers record them.
		type arrival struct{ ms, recorded int64 }
		var arrivals []arrival
		for i := 0; i < 60+rng.IntN(120); i++ {
			ms := start + int64(rng.IntN(400))
			arrivals = append(arrivals, arrival{ms, ms + int64(rng.IntN(30))})
		}
		slices.SortFunc(arrivals, func(a, b arrival) int { return int(a.recorded - b.recorded) })
		admits := make([]int64, len(arrivals))
		for i, a := range arrivals {
			admits[i] = a.ms
		}
		limit := int64(5 + rng.IntN(20))
		window := int64(20 + rng.IntN(150))
		for _, aligned := range []bool{false, true} {
			c := NewSlidingChecker(limit, window, horizon, aligned)
			for _, ms := range admits {
				c.AdmitMs(ms)
			}
			if c.log.late != 0 {
				t.Fatalf("round %d: %d admits later than the horizon; the test means to stay within it", round, c.log.late)
			}
			want := bruteWindow(admits, limit, window, aligned)
			live := c.Result()
			live.Current = 0
			if live != want {
				t.Fatalf("round %d aligned=%v window %d limit %d: live %+v, want %+v", round, aligned, window, limit, live, want)
			}
			got := c.Finish()
			got.Current = 0
			if got != want {
				t.Fatalf("round %d aligned=%v window %d limit %d: settled %+v, want %+v", round, aligned, window, limit, got, want)
			}
		}
		rate := float64(20 + rng.IntN(200))
		slack := []float64{0, 0.25, 0.5, 1.5}[round%4]
		b := NewBucketChecker(limit, rate, 1, horizon)
		b.slack = slack
		for _, ms := range admits {
			b.AdmitMs(ms)
		}
		want := bruteBucket(admits, limit, rate, slack)
		live := b.Result()
		live.Current = 0
		got := b.Finish()
		got.Current = 0
		if live != want || got != want {
			t.Fatalf("round %d bucket burst %d rate %g slack %g: live %+v, settled %+v, want %+v", round, limit, rate, slack, live, got, want)
		}
	}
}

func TestSlidingCheckerCurrentIsTheNewestWindow(t *testing.T) {
	c := NewSlidingChecker(10, 100, 1000, false)
	for _, ms := range []int64{1000, 1050, 1099, 1150} {
		c.AdmitMs(ms)
	}
	// (1050, 1150] holds 1099 and 1150, live and once settled.
	if got := c.Result().Current; got != 2 {
		t.Fatalf("live current %d, want 2", got)
	}
	if got := c.Finish().Current; got != 2 {
		t.Fatalf("settled current %d, want 2", got)
	}
	f := NewSlidingChecker(10, 100, 1000, true)
	for _, ms := range []int64{1000, 1050, 1099, 1150} {
		f.AdmitMs(ms)
	}
	if got := f.Finish().Current; got != 1 {
		t.Fatalf("fixed window: current %d, want 1 (only 1150 in [1100, 1200))", got)
	}
}
