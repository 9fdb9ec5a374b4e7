package overshoot

import (
	"sync"
	"testing"
)

func TestWitnessCountsOnlyCoexistingAdmits(t *testing.T) {
	w := NewWitness(2, 0)
	w.AdmitMs(0)
	w.AdmitMs(0)
	w.ReleaseNewest()
	w.AdmitMs(0) // two in flight again: at the limit, not over it
	if got := w.Finish(); got.Peak != 2 || got.Overshoot != 0 || got.OvershootEvent != 0 {
		t.Fatalf("sequential admits within the limit: got %+v, want peak 2 and no overshoot", got)
	}
	w.AdmitMs(0) // three coexist: proof of overshoot
	if got := w.Finish(); got.Peak != 3 || got.Overshoot != 1 || got.OvershootEvent != 1 {
		t.Fatalf("three coexisting admits with limit 2: got %+v, want peak 3, overshoot 1, 1 event", got)
	}
}

func TestSlidingCheckerFindsTheWorstWindow(t *testing.T) {
	tests := []struct {
		name      string
		admits    []int64
		limit     int64
		overshoot int64
		peak      int64
	}{
		{"spread out, never over", []int64{0, 500, 1000, 1500, 2000}, 2, 0, 2},
		{"exactly at the window edge is a new window", []int64{0, 0, 1000, 1000}, 2, 0, 2},
		{"one ms inside the window overshoots", []int64{0, 0, 999}, 2, 1, 3},
		{"out of order arrivals are still counted", []int64{500, 100, 300, 200}, 3, 1, 4},
		{"a burst of five", []int64{10, 10, 10, 10, 10}, 2, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewSlidingChecker(tt.limit, 1000, 5000, false)
			for _, ms := range tt.admits {
				c.AdmitMs(1_700_000_000_000 + ms)
			}
			got := c.Finish()
			if got.Overshoot != tt.overshoot || got.Peak != tt.peak {
				t.Fatalf("got peak %d overshoot %d, want peak %d overshoot %d", got.Peak, got.Overshoot, tt.peak, tt.overshoot)
			}
		})
	}
}

func TestFixedWindowCheckerCountsEachAlignedWindowApart(t *testing.T) {
	// Two admits at the end of one window and two at the start of the next: a sliding window
	// would see four in one second, but each fixed window holds only two.
	c := NewSlidingChecker(2, 1000, 5000, true)
	for _, ms := range []int64{1_700_000_000_900, 1_700_000_000_950, 1_700_000_001_000, 1_700_000_001_010} {
		c.AdmitMs(ms)
	}
	if got := c.Finish(); got.Overshoot != 0 || got.Peak != 2 {
		t.Fatalf("aligned windows: got %+v, want peak 2 and no overshoot", got)
	}
	c = NewSlidingChecker(2, 1000, 5000, true)
	for _, ms := range []int64{1_700_000_001_000, 1_700_000_001_500, 1_700_000_001_999} {
		c.AdmitMs(ms)
	}
	if got := c.Finish(); got.Overshoot != 1 || got.OvershootEvent != 1 {
		t.Fatalf("three in one fixed window with limit 2: got %+v, want overshoot 1, 1 event", got)
	}
}

func TestBucketCheckerAllowsBurstPlusRefill(t *testing.T) {
	const start = 1_700_000_000_000
	// burst 5, 10/s: five at once, then one every 100ms is exactly the bucket's allowance.
	c := NewBucketChecker(5, 10, 1, 5000)
	for i := 0; i < 5; i++ {
		c.AdmitMs(start)
	}
	for i := int64(1); i <= 20; i++ {
		c.AdmitMs(start + i*100)
	}
	if got := c.Finish(); got.Overshoot != 0 || got.Peak != 5 {
		t.Fatalf("burst then steady refill: got %+v, want peak 5 and no overshoot", got)
	}
	// Seven at once from a bucket of five is two too many, whatever follows.
	c = NewBucketChecker(5, 10, 1, 5000)
	for i := 0; i < 7; i++ {
		c.AdmitMs(start)
	}
	c.AdmitMs(start + 1000)
	if got := c.Finish(); got.Overshoot != 2 || got.OvershootEvent != 2 {
		t.Fatalf("seven from a bucket of five: got %+v, want overshoot 2, 2 events", got)
	}
	// Refill counts only forward: 5 at t, then 3 more 100ms later (only 1 refilled) is 2 over.
	c = NewBucketChecker(5, 10, 1, 5000)
	for i := 0; i < 5; i++ {
		c.AdmitMs(start)
	}
	for i := 0; i < 3; i++ {
		c.AdmitMs(start + 100)
	}
	if got := c.Finish(); got.Overshoot != 2 {
		t.Fatalf("draining faster than refill: got %+v, want overshoot 2", got)
	}
}

func TestCheckersReportOvershootBeforeSettling(t *testing.T) {
	// A live view must not wait for the late-arrival horizon to show evidence.
	sliding := NewSlidingChecker(2, 1000, 60_000, false)
	bucket := NewBucketChecker(2, 1, 1, 60_000)
	for i := 0; i < 3; i++ {
		sliding.AdmitMs(1_700_000_000_000)
		bucket.AdmitMs(1_700_000_000_000)
	}
	if got := sliding.Result(); got.Overshoot != 1 {
		t.Errorf("sliding: live result %+v, want overshoot 1", got)
	}
	if got := bucket.Result(); got.Overshoot != 1 {
		t.Errorf("bucket: live result %+v, want overshoot 1", got)
	}
}

func TestCheckersAcceptAnOlderNowAfterTheFirstAdmit(t *testing.T) {
	// Racing workers: the first admit recorded carries 1000, the next one an older 998. A window
	// limiter that admitted 998, then three more at 1998-1999, never had four in (t-1000, t];
	// moving 998 forward to 1000 would have invented an overshoot.
	c := NewSlidingChecker(3, 1000, 5000, false)
	for _, ms := range []int64{1000, 998, 1998, 1999} {
		c.AdmitMs(1_700_000_000_000 + ms)
	}
	if got := c.Finish(); got.Overshoot != 0 || got.Peak != 3 {
		t.Fatalf("got %+v, want peak 3 and no overshoot", got)
	}
}

func TestAdmitsLaterThanTheHorizonAreLeftOutNotMoved(t *testing.T) {
	c := NewSlidingChecker(1, 100, 50, false)
	c.AdmitMs(1_000)
	c.AdmitMs(1_200) // settles everything up to 1150
	c.AdmitMs(1_010) // 190ms late with a 50ms horizon: its window is already judged
	if got := c.Finish(); got.Overshoot != 0 {
		t.Fatalf("a late admit was counted somewhere it never was: %+v", got)
	}
}

func TestWitnessNeverCountsRequestsTheLimiterMayHaveForgotten(t *testing.T) {
	// Stale-after 100ms: a request decided 100ms or more ago may have been reclaimed (or its
	// set expired), so it is no evidence any more, however long it is still held.
	w := NewWitness(2, 100)
	w.AdmitHeld(1, 1_000, 1_005)
	w.AdmitHeld(2, 1_010, 1_015)
	w.AdmitHeld(3, 1_020, 1_101) // three held, but request 1 was decided 101ms ago
	if got := w.Result(); got.Overshoot != 0 || got.OvershootEvent != 0 || got.Peak != 2 {
		t.Fatalf("three held, one decided stale-after ago: got %+v, want peak 2 and no overshoot", got)
	}
	w.AdmitHeld(4, 1_090, 1_105) // 1_010, 1_020, 1_090: all decided within 100ms
	if got := w.Result(); got.Overshoot != 1 || got.OvershootEvent != 1 || got.Peak != 3 {
		t.Fatalf("three held, decided within 100ms: got %+v, want peak 3, overshoot 1, 1 event", got)
	}
}

func TestWitnessReleasePairsWithItsOwnAdmit(t *testing.T) {
	w := NewWitness(1, 0)
	w.AdmitHeld(1, 0, 0)
	w.ReleaseHeld(7) // a release whose admit never counted must not free another's slot
	w.AdmitHeld(2, 0, 0)
	if got := w.Result(); got.Overshoot != 1 {
		t.Fatalf("a stray release hid the overshoot: got %+v", got)
	}
}

// Workers that each admit and release in turn never hold more than one request apiece, however
// their calls interleave: an anonymous Release must never end an admit that is not yet held
// (it would leave the request it really ended held for ever, and blame a correct limiter).
func TestWitnessAnonymousAdmitsAndReleasesInterleaveWithoutDrift(t *testing.T) {
	const workers, rounds = 8, 20000
	w := NewWitness(workers, 0)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				w.AdmitMs(0)
				w.ReleaseNewest()
			}
		}()
	}
	wg.Wait()
	got := w.Finish()
	if got.Peak > workers || got.Overshoot != 0 {
		t.Fatalf("%d workers holding one request each: got %+v, want peak <= %d and no overshoot", workers, got, workers)
	}
	if n := w.inFlight.Load(); n != 0 {
		t.Fatalf("every admit was released, yet %d are still held", n)
	}
}

// A worker reads its clock (102) once its acquire returns, then waits for the witness's lock;
// meanwhile another request, decided at 103, has the limiter reclaim request 1 (decided at 100,
// stale-after 3ms) to admit it, and is recorded first. The waiting admit must not count
// request 1, which the limiter rightly forgot before the held set was read.
func TestWitnessJudgesByTheLatestClockRecorded(t *testing.T) {
	w := NewWitness(2, 3)
	w.AdmitHeld(1, 100, 101)
	w.AdmitHeld(2, 103, 103) // admitted in place of request 1, reclaimed as abandoned
	w.AdmitHeld(3, 102, 102) // admitted before request 2, recorded after it
	if got := w.Result(); got.Overshoot != 0 || got.OvershootEvent != 0 {
		t.Fatalf("three held, one of them reclaimed before the last was recorded: got %+v, want no overshoot", got)
	}
}
