package overshoot_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/kind/bucket"
	"github.com/limitctl/limitctl/internal/evidence/kind/fixed"
	"github.com/limitctl/limitctl/internal/evidence/kind/sliding"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
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

func judge(c *overshoot.IntervalChecker, calls []call) overshoot.CheckResult {
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

// The kinds' interval checks at the test's limit and window (a bucket: its burst, refilled in a
// window).
var (
	slidingI = func() *overshoot.IntervalChecker { return sliding.Intervals(testLimitI, testWindowI) }
	fixedI   = func() *overshoot.IntervalChecker { return fixed.Intervals(testLimitI, testWindowI) }
	bucketI  = func() *overshoot.IntervalChecker {
		return bucket.Intervals(testLimitI, float64(testLimitI)/testWindowI.Seconds())
	}
)

func TestIntervalCheckerNeverBlamesACorrectLimiter(t *testing.T) {
	w := testWindowI.Microseconds()
	rate := float64(testLimitI) / testWindowI.Seconds()
	for seed := uint64(1); seed <= 20; seed++ {
		for _, maxLat := range []int64{50, 2000, 30_000} {
			cases := []struct {
				name   string
				check  func() *overshoot.IntervalChecker
				decide func(int64) bool
			}{
				{"sliding", slidingI, slidingLimiter(testLimitI, w)},
				{"fixed aligned", fixedI, fixedLimiter(testLimitI, w, int64(seed)*7919%w, false)},
				{"fixed anchored", fixedI, fixedLimiter(testLimitI, w, 0, true)},
				{"bucket", bucketI, gcraLimiter(testLimitI, rate)},
			}
			for _, c := range cases {
				calls := simulate(seed, 3_000_000, maxLat, true, c.decide)
				got := judge(c.check(), calls)
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
			check  func() *overshoot.IntervalChecker
			decide func(int64) bool
		}{
			{"sliding", slidingI, slidingLimiter(2*testLimitI, w)},
			{"fixed aligned", fixedI, fixedLimiter(2*testLimitI, w, 0, false)},
			{"fixed anchored", fixedI, fixedLimiter(2*testLimitI, w, 0, true)},
			{"bucket rate", bucketI, gcraLimiter(testLimitI, 2*rate)},
			{"bucket burst", bucketI, gcraLimiter(2*testLimitI, rate)},
		}
		for _, c := range cases {
			// Five windows of steady load, with calls taking up to 2 ms each way. (A fixed window
			// seen once, alone, cannot be told from two correct windows meeting: it takes two
			// windows in a row, which steady load gives.)
			calls := simulate(seed, 5*w, 2000, false, c.decide)
			checker := c.check()
			var first *overshoot.Moment
			checker.OnFirstOver(func(m overshoot.Moment) { first = &m })
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
	c := slidingI()
	for i := int64(0); i < 20; i++ {
		c.AdmitInterval(ms(i/2), ms(i/2+1))
	}
	c.AdmitInterval(ms(5), ms(100))
	if got := c.Finish(); got.Overshoot != 0 {
		t.Fatalf("an uncertain admit made overshoot %d", got.Overshoot)
	}
	// The same 21 with the last one's reply back within the window: certain.
	c = slidingI()
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
	c := slidingI()
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
	for i, check := range []func() *overshoot.IntervalChecker{slidingI, fixedI, bucketI} {
		calls := simulate(3, 2_000_000, 500, false, gcraLimiter(testLimitI/2, rate/2))
		got := judge(check(), calls)
		if got.Overshoot != 0 || got.OvershootEvent != 0 {
			t.Errorf("check %d: a limiter at half the limit gave %+v", i, got)
		}
	}
}

func TestIntervalPowerOfTightAndLooseCalls(t *testing.T) {
	tight := sliding.Intervals(20, time.Second)
	for w := 0; w < 6; w++ {
		for i := 0; i < 20; i++ {
			at := time.Duration(w)*time.Second + time.Duration(i)*time.Millisecond
			tight.AdmitInterval(at, at+time.Millisecond)
		}
	}
	tight.Finish()
	if k, ok := tight.CaughtFrom(40); !ok || k != 1 {
		t.Errorf("calls of 1ms, 20 a window: caught from %d (%v), want 1", k, ok)
	}
	// Calls slower than a window are no evidence: no phantom like them is judged either.
	loose := sliding.Intervals(20, time.Second)
	for w := 0; w < 6; w++ {
		for i := 0; i < 20; i++ {
			at := time.Duration(w)*time.Second + time.Duration(i)*time.Millisecond
			loose.AdmitInterval(at, at+1100*time.Millisecond)
		}
	}
	loose.Finish()
	if k, ok := loose.CaughtFrom(40); ok {
		t.Errorf("calls of 1.1s: caught from %d, want none", k)
	}
}

// The power search's early answer (no k up to the bound could prove anything, by counting every
// admit and every phantom a span could hold) gives what the search itself gives, at limits below
// the load's, near it and far above it, for every kind.
func TestIntervalPowerAnswersEarlyOnlyWhatTheSearchFinds(t *testing.T) {
	found, none := 0, 0
	steady := func(c *overshoot.IntervalChecker) { // 2,000 a second for a second, each answered within 2ms
		for i := range 2000 {
			at := time.Duration(i) * 500 * time.Microsecond
			c.AdmitInterval(at, at+time.Duration(100+i%19*100)*time.Microsecond)
		}
	}
	burst := func(c *overshoot.IntervalChecker) { // 300 in 30ms, then quiet: a span holds them all
		for i := range 300 {
			at := time.Duration(i) * 100 * time.Microsecond
			c.AdmitInterval(at, at+50*time.Microsecond)
		}
	}
	for _, limit := range []int64{20, 150, 290, 299, 300, 600, 1_000_000} {
		for name, check := range map[string]func() *overshoot.IntervalChecker{
			"sliding": func() *overshoot.IntervalChecker { return sliding.Intervals(limit, 100*time.Millisecond) },
			"fixed":   func() *overshoot.IntervalChecker { return fixed.Intervals(limit, 100*time.Millisecond) },
			"bucket":  func() *overshoot.IntervalChecker { return bucket.Intervals(limit, float64(limit)*10) },
		} {
			for _, load := range []func(*overshoot.IntervalChecker){steady, burst} {
				c := check()
				load(c)
				c.Finish()
				for _, maxK := range []int64{1, 8, 64, 4096} {
					k, ok := c.CaughtFrom(maxK)
					sk, sok := c.CaughtFromSearched(maxK)
					if k != sk || ok != sok {
						t.Fatalf("%s limit %d up to %d: caught from %d (%v), the search says %d (%v)", name, limit, maxK, k, ok, sk, sok)
					}
					if ok {
						found++
					} else {
						none++
					}
				}
			}
		}
	}
	if found == 0 || none == 0 {
		t.Fatalf("%d cases proven and %d not: the comparison needs both", found, none)
	}
}
