package overshoot_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// feedLive hands calls to c one by one in reply order, judging the pending starts provisionally
// every few calls as the views' ticks would, and returns the highest peak and events the live
// result showed, and the first call at which it showed an overshoot that the judged result did
// not yet (-1: never).
func feedLive(c *overshoot.IntervalChecker, calls []call) (peak, events int64, earlyAt int) {
	earlyAt = -1
	clock := time.Unix(0, 0)
	for i, a := range calls {
		c.AdmitInterval(time.Duration(a.sent)*time.Microsecond, time.Duration(a.replied)*time.Microsecond)
		if i%7 != 0 {
			continue
		}
		clock = clock.Add(overshoot.LiveEvery)
		judged, live := c.JudgedAndLive(clock)
		peak = max(peak, judged.Peak, live.Peak)
		events = max(events, judged.OvershootEvent+live.OvershootEvent)
		if earlyAt < 0 && live.Peak > testLimitI && judged.Peak <= testLimitI {
			earlyAt = i
		}
	}
	return peak, events, earlyAt
}

// A provisional judgment only counts admits certainly inside a span, as the final one does, on
// fewer of them: what it shows is never more than the run's summary states, for a correct
// limiter (nothing) as for one that admits twice its limit.
func TestLiveIntervalJudgmentNeverShowsMoreThanTheFinal(t *testing.T) {
	w := testWindowI.Microseconds()
	rate := float64(testLimitI) / testWindowI.Seconds()
	for seed := uint64(1); seed <= 12; seed++ {
		for _, maxLat := range []int64{50, 2000, 30_000} {
			for _, c := range []struct {
				name   string
				check  func() *overshoot.IntervalChecker
				decide func(int64) bool
			}{
				{"sliding", slidingI, slidingLimiter(testLimitI, w)},
				{"fixed", fixedI, fixedLimiter(testLimitI, w, int64(seed)*7919%w, false)},
				{"fixed at twice the limit", fixedI, fixedLimiter(2*testLimitI, w, 0, false)},
				{"bucket", bucketI, gcraLimiter(testLimitI, rate)},
				{"bucket of twice the burst", bucketI, gcraLimiter(2*testLimitI, rate)},
			} {
				calls := simulate(seed, 2_000_000, maxLat, true, c.decide)
				checker := c.check()
				livePeak, liveEvents, _ := feedLive(checker, calls)
				final := checker.Finish()
				if livePeak > final.Peak || liveEvents > final.OvershootEvent {
					t.Fatalf("%s seed %d latency %dµs: live peak %d, %d events; final %d, %d", c.name, seed, maxLat,
						livePeak, liveEvents, final.Peak, final.OvershootEvent)
				}
			}
		}
	}
}

// An endpoint that admits twice its limit shows its overshoot live, a window or so after the
// admits behind it, not the widest span later when its starts are judged for good.
func TestLiveIntervalJudgmentShowsAnOvershootBeforeItsStartIsJudged(t *testing.T) {
	w := testWindowI.Microseconds()
	for seed := uint64(1); seed <= 5; seed++ {
		calls := simulate(seed, 2_000_000, 2000, false, fixedLimiter(2*testLimitI, w, 0, false))
		checker := fixedI()
		_, _, earlyAt := feedLive(checker, calls)
		if earlyAt < 0 {
			t.Fatalf("seed %d: the overshoot showed only once judged", seed)
		}
		if span := calls[earlyAt].replied - calls[0].sent; span > 3*w {
			t.Errorf("seed %d: shown live %dµs into the run, more than three windows", seed, span)
		}
	}
}

// The live view's sweep (one sort, ranks and a walking pointer) counts each pending start's
// spans exactly as counting them one by one does: ties of sending and of reply included, in
// order and out of it, for every kind's spans.
func TestLiveSweepCountsAsDirectCountingDoes(t *testing.T) {
	overs := 0
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(300)
		var pending [][2]int64
		sent := int64(0)
		for range n {
			// On a coarse grid in half the seeds, so that replies fall on a span's very end.
			grain := int64(1 + seed%2*4_999)
			sent += rng.Int64N(3) * rng.Int64N(2_000/grain+1) * grain // runs of equal sendings
			pending = append(pending, [2]int64{sent, sent + rng.Int64N(50_000/grain+1)*grain})
		}
		for name, check := range map[string]func() *overshoot.IntervalChecker{"sliding": slidingI, "fixed": fixedI, "bucket": bucketI} {
			fast, direct := check().PendingJudgments(pending)
			if fast != direct {
				t.Fatalf("seed %d, %s, %d admits: the sweep says %+v, direct counting %+v", seed, name, n, fast, direct)
			}
			if direct.OvershootEvent > 0 {
				overs++
			}
		}
	}
	if overs == 0 {
		t.Fatal("no case had an overshoot: the comparison never saw one counted")
	}
}

// A sweep the pacing has not made again yet still shows only the starts that are pending: a
// start it found over and the checker has since judged for good is counted once, by the
// checker, so the live view never shows more events than the run's summary.
func TestAStaleSweepDoesNotCountAJudgedStartTwice(t *testing.T) {
	c := fixedI()
	for i := range 3 * testLimitI { // three times the limit in 6ms: over in every span
		at := time.Duration(i) * 100 * time.Microsecond
		c.AdmitInterval(at, at+50*time.Microsecond)
	}
	swept := time.Unix(0, 0).Add(time.Hour)
	judged, live := c.JudgedAndLive(swept)
	if judged.OvershootEvent != 0 || live.OvershootEvent == 0 {
		t.Fatalf("before any start is judged: judged %d events, live %d; want 0 and some", judged.OvershootEvent, live.OvershootEvent)
	}
	at := 2 * time.Second // past the widest span and its lag: every start of the burst is judged
	c.AdmitInterval(at, at+50*time.Microsecond)
	judged, live = c.JudgedAndLive(swept) // the same instant: no new sweep
	final := c.Finish()
	if judged.OvershootEvent == 0 || judged.OvershootEvent+live.OvershootEvent > final.OvershootEvent {
		t.Fatalf("after the burst was judged: judged %d + live %d events, the summary %d", judged.OvershootEvent, live.OvershootEvent, final.OvershootEvent)
	}
}
