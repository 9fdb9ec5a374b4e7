package refusal_test

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

// The edges of abandoned requests (Config.Abandon) in the refusal judge, one decision at a time,
// on the timelines of judge_test.go (µs; stale-after 100ms).

// abandoned is an admitted concurrency request never released.
func abandoned(sent, replied int64) evidence.Decision {
	d := at(sent, replied, evidence.Admitted)
	d.Abandoned = true
	return d
}

// refusedAt is a refusal sent at sent (answered a millisecond later), stamped at stamp.
func refusedAt(sent, stamp int64) evidence.Decision {
	d := at(sent, sent+ms, evidence.Refused)
	d.ClockLoUs, d.ClockHiUs = stamp, stamp
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
		if (r.Count > 0) != c.blamed {
			t.Errorf("%s: false rejects %d, want blamed=%v", c.name, r.Count, c.blamed)
			continue
		}
		if c.blamed {
			f := r.First
			if f.HeldOrAdmitted != 1 || f.AbandonedReclaimable == nil || *f.AbandonedReclaimable != 1 || f.Limit != 2 {
				t.Errorf("%s: evidence %+v, want 1 held and 1 of the 2 abandoned more than stale-after ago", c.name, f)
			}
		}
	}
	// A script told no stale time (a plain semaphore) may hold an abandoned slot for ever.
	spec.Rules.NoStaleAfter = true
	hour := time.Hour.Microseconds()
	if r := judgeOnce(spec, live, abandoned(0, 1*ms), refusedAt(hour, hour)); r.Count != 0 {
		t.Errorf("a plain semaphore blamed for an abandoned slot it never reclaims")
	}
}

// The evidence names only as many abandoned requests as the limit leaves to them: the limiter
// counted limit members, of which at most held_or_admitted can rightly be held.
func TestHeldAbandonedReclaimableIsAtMostTheRoomLeft(t *testing.T) {
	r := judgeOnce(concurrency(2), abandoned(0, 1*ms), abandoned(1*ms, 2*ms), abandoned(2*ms, 3*ms), refusedAt(200*ms, 200*ms))
	if r.Count != 1 || r.First.HeldOrAdmitted != 0 || *r.First.AbandonedReclaimable != 2 {
		t.Fatalf("three abandoned long ago, limit 2: got %d %+v, want 0 held and 2 abandoned", r.Count, r.First)
	}
	// A refusal with room and no abandoned request behind it says so: 0.
	r = judgeOnce(concurrency(2), held(0, 1*ms, 50*ms), refusedAt(10*ms, 10*ms))
	if r.Count != 1 || r.First.AbandonedReclaimable == nil || *r.First.AbandonedReclaimable != 0 {
		t.Fatalf("a refusal with room, nothing abandoned: got %d %+v", r.Count, r.First)
	}
	// The windows and the bucket hold nothing to abandon: no such field.
	r = judgeOnce(window(slidingKind, 2), at(0, 1*ms, evidence.Admitted), at(10*ms, 11*ms, evidence.Refused))
	if r.Count != 1 || r.First.AbandonedReclaimable != nil {
		t.Fatalf("a window's false reject: %d %+v", r.Count, r.First)
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
		spec.StaleAfter, spec.Rules.StaleUnit = c.stale.Microseconds(), time.Second
		if r := judgeOnce(spec, abandoned(0, 1*ms), refusedAt(c.sent, c.sent)); (r.Count > 0) != c.blamed {
			t.Errorf("%s: false rejects %d, want blamed=%v", c.name, r.Count, c.blamed)
		}
	}
}
