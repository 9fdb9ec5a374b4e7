package overshoot

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// call is one simulated decision: the limiter decided at decided (its clock), the client sent
// the call at sent and read the reply at replied.
type call struct{ sent, decided, replied int64 } // µs

// simulate offers requests at random instants over dur (with idle spells, so windows start
// empty too) to a limiter decide(t) run at the true time, and returns the admitted calls with
// latencies of up to maxLat on either side of the decision, in reply order as the engine sees them.
func simulate(seed uint64, dur, maxLat int64, idle bool, decide func(t int64) bool) []call {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []call
	for t := int64(0); t < dur; {
		if idle && rng.IntN(200) == 0 {
			t += rng.Int64N(300_000) // idle
		}
		t += rng.Int64N(400)
		if decide(t) {
			out = append(out, call{sent: t - rng.Int64N(maxLat+1), decided: t, replied: t + rng.Int64N(maxLat+1)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].replied < out[j].replied })
	return out
}

func judge(c *IntervalChecker, calls []call) CheckResult {
	for _, a := range calls {
		c.AdmitInterval(time.Duration(a.sent)*time.Microsecond, time.Duration(a.replied)*time.Microsecond)
	}
	return c.Finish()
}

// slidingLimiter admits when fewer than limit admits fall in (t-window, t], on milliseconds.
func slidingLimiter(limit, windowUs int64) func(int64) bool {
	var log []int64
	return func(t int64) bool {
		ms := t / 1000
		n := 0
		for _, x := range log {
			if x > ms-windowUs/1000 {
				n++
			}
		}
		if int64(n) >= limit {
			return false
		}
		log = append(log, ms)
		if len(log) > 4*int(limit) {
			log = log[len(log)-2*int(limit):]
		}
		return true
	}
}

// fixedLimiter: windows aligned at offset+k*window (aligned), or opened by the first admit
// after the previous one expired (anchored, as SET NX EX then INCRBY).
func fixedLimiter(limit, windowUs, offset int64, anchored bool) func(int64) bool {
	var start, count int64 = math.MinInt64 / 2, 0
	return func(t int64) bool {
		if anchored {
			if t >= start+windowUs {
				start, count = t, 0
			}
		} else if s := (t-offset)/windowUs*windowUs + offset; s != start {
			start, count = s, 0
		}
		if count >= limit {
			return false
		}
		count++
		return true
	}
}

// gcraLimiter is a token bucket as a theoretical arrival time, in microseconds.
func gcraLimiter(burst int64, ratePerSec float64) func(int64) bool {
	interval := 1e6 / ratePerSec
	tat := math.Inf(-1)
	return func(t int64) bool {
		now := float64(t)
		tat = math.Max(tat, now)
		if now < tat+interval-float64(burst)*interval {
			return false
		}
		tat += interval
		return true
	}
}

const (
	testLimitI  = 20
	testWindowI = 100 * time.Millisecond
)

func TestIntervalCheckerNeverBlamesACorrectLimiter(t *testing.T) {
	w := testWindowI.Microseconds()
	rate := float64(testLimitI) / testWindowI.Seconds()
	for seed := uint64(1); seed <= 20; seed++ {
		for _, maxLat := range []int64{50, 2000, 30_000} {
			cases := []struct {
				name   string
				inv    IntervalInvariant
				decide func(int64) bool
			}{
				{"sliding", SlidingInvariant, slidingLimiter(testLimitI, w)},
				{"fixed aligned", FixedInvariant, fixedLimiter(testLimitI, w, int64(seed)*7919%w, false)},
				{"fixed anchored", FixedInvariant, fixedLimiter(testLimitI, w, 0, true)},
				{"bucket", BucketInvariant, gcraLimiter(testLimitI, rate)},
			}
			for _, c := range cases {
				calls := simulate(seed, 3_000_000, maxLat, true, c.decide)
				got := judge(NewIntervalChecker(c.inv, testLimitI, testWindowI, rate), calls)
				if got.Overshoot != 0 {
					t.Fatalf("%s seed %d latency %dµs: overshoot %d (peak %d) over %d admits of a correct limiter", c.name, seed, maxLat, got.Overshoot, got.Peak, len(calls))
				}
			}
		}
	}
}

func TestIntervalCheckerCatchesTwiceTheLimit(t *testing.T) {
	w := testWindowI.Microseconds()
	rate := float64(testLimitI) / testWindowI.Seconds()
	for seed := uint64(1); seed <= 20; seed++ {
		cases := []struct {
			name   string
			inv    IntervalInvariant
			decide func(int64) bool
		}{
			{"sliding", SlidingInvariant, slidingLimiter(2*testLimitI, w)},
			{"fixed aligned", FixedInvariant, fixedLimiter(2*testLimitI, w, 0, false)},
			{"fixed anchored", FixedInvariant, fixedLimiter(2*testLimitI, w, 0, true)},
			{"bucket rate", BucketInvariant, gcraLimiter(testLimitI, 2*rate)},
			{"bucket burst", BucketInvariant, gcraLimiter(2*testLimitI, rate)},
		}
		for _, c := range cases {
			// Five windows of steady load, with calls taking up to 2 ms each way. (A fixed window
			// seen once, alone, cannot be told from two correct windows meeting: it takes two
			// windows in a row, which steady load gives.)
			calls := simulate(seed, 5*w, 2000, false, c.decide)
			checker := NewIntervalChecker(c.inv, testLimitI, testWindowI, rate)
			var first *Moment
			checker.OnFirstOver(func(m Moment) { first = &m })
			got := judge(checker, calls)
			if got.Overshoot == 0 {
				t.Fatalf("%s seed %d: a limiter admitting twice its limit was not caught (peak %d, %d admits)", c.name, seed, got.Peak, len(calls))
			}
			// The first overshoot's count broke the bound it is told with: the limit for one
			// window, Allowed for a longer span.
			if first == nil || first.Count <= max(first.Allowed, testLimitI) {
				t.Fatalf("%s seed %d: the first overshoot %+v does not exceed its bound", c.name, seed, first)
			}
		}
	}
}

func TestIntervalCheckerNeedsCertainty(t *testing.T) {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	// 21 admits decided within 10 ms would break a limit of 20 per 100 ms, but one of them
	// may have been decided 95 ms later: not certainly in one window.
	c := NewIntervalChecker(SlidingInvariant, testLimitI, testWindowI, 0)
	for i := int64(0); i < 20; i++ {
		c.AdmitInterval(ms(i/2), ms(i/2+1))
	}
	c.AdmitInterval(ms(5), ms(100))
	if got := c.Finish(); got.Overshoot != 0 {
		t.Fatalf("an uncertain admit made overshoot %d", got.Overshoot)
	}
	// The same 21 with the last one's reply back within the window: certain.
	c = NewIntervalChecker(SlidingInvariant, testLimitI, testWindowI, 0)
	for i := int64(0); i < 20; i++ {
		c.AdmitInterval(ms(i/2), ms(i/2+1))
	}
	c.AdmitInterval(ms(5), ms(60))
	if got := c.Finish(); got.Overshoot != 1 || got.Peak != 21 {
		t.Fatalf("21 admits certainly within 60 ms: %+v, want overshoot 1", got)
	}
}

func TestIntervalCheckerLeavesLateAndSlowAdmitsUnjudged(t *testing.T) {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	c := NewIntervalChecker(SlidingInvariant, testLimitI, testWindowI, 0)
	c.AdmitInterval(ms(0), ms(150)) // slower than a window: no evidence either way
	c.AdmitInterval(ms(10), ms(11))
	c.AdmitInterval(ms(1000), ms(1001)) // judges the admit sent at 10 ms
	c.AdmitInterval(ms(5), ms(1002))    // sent before a judged one, and slow
	c.AdmitInterval(ms(9), ms(12))      // sent before a judged one: too late to count
	if got := c.Finish().Unjudged; got != 3 {
		t.Fatalf("unjudged %d, want 3", got)
	}
}

func TestIntervalCheckerCountsEventsOnlyWithOvershoot(t *testing.T) {
	rate := float64(testLimitI) / testWindowI.Seconds()
	for _, inv := range []IntervalInvariant{SlidingInvariant, FixedInvariant, BucketInvariant} {
		calls := simulate(3, 2_000_000, 500, false, gcraLimiter(testLimitI/2, rate/2))
		got := judge(NewIntervalChecker(inv, testLimitI, testWindowI, rate), calls)
		if got.Overshoot != 0 || got.OvershootEvent != 0 {
			t.Errorf("invariant %d: a limiter at half the limit gave %+v", inv, got)
		}
	}
}
