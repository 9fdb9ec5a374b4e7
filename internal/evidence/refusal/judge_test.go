package refusal_test

import (
	"math"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// The edges of each false-reject rule, one decision at a time. Times are µs of the run's
// monotonic clock; stamps (the client's time passed to the script) are µs too, here on the
// same scale (base 0), so every case reads as a timeline.

const ms = int64(1000)

func judgeOnce(spec refusal.Spec, calls ...evidence.Decision) *refusal.Judge {
	r := refusal.New(spec)
	for _, c := range calls {
		r.Record(c)
	}
	r.JudgeBefore(refusal.Forever)
	return r
}

// at is a call sent at sent, answered at replied, stamped at sent.
func at(sent, replied int64, o evidence.Outcome) evidence.Decision {
	return evidence.Decision{SentUs: sent, RepliedUs: replied, ClockLoUs: sent, ClockHiUs: sent, Outcome: o}
}

// held is an admitted concurrency request, released (answered) at released.
func held(sent, replied, released int64) evidence.Decision {
	d := at(sent, replied, evidence.Admitted)
	d.ReleasedUs, d.ReleaseOK = released, true
	return d
}

func concurrency(limit int64) refusal.Spec {
	return concurrencyKind.spec(refusal.Spec{Limit: limit, StaleAfter: 100 * ms, Horizon: 5000 * ms})
}

func TestHeldRefusalWithAFreeSlotIsFalse(t *testing.T) {
	r := judgeOnce(concurrency(2), held(0, 1*ms, 50*ms), at(10*ms, 11*ms, evidence.Refused))
	if r.Count != 1 || r.First.HeldOrAdmitted != 1 || r.First.Limit != 2 {
		t.Fatalf("one of two held, refused: want 1 false reject counting 1, got %d %+v", r.Count, r.First)
	}
}

// The limiter decided at one instant of [sent, replied]: a request released at that
// interval's first instant, or taken at its last, may have been held then.
func TestHeldCountsRequestsTouchingTheIntervalAtOneInstant(t *testing.T) {
	refused := at(10*ms, 11*ms, evidence.Refused)
	for name, other := range map[string]evidence.Decision{
		"released as the refusal was sent":     held(0, 1*ms, 10*ms),
		"acquired as the refusal was answered": held(11*ms, 12*ms, 50*ms),
	} {
		if r := judgeOnce(concurrency(2), held(0, 1*ms, 50*ms), other, refused); r.Count != 0 {
			t.Errorf("%s: blamed (%d)", name, r.Count)
		}
	}
	// Sent after the refusal's reply, it cannot have run before it.
	if r := judgeOnce(concurrency(2), held(0, 1*ms, 50*ms), held(11*ms+1, 12*ms, 50*ms), refused); r.Count != 1 {
		t.Errorf("a request sent after the refusal's reply was counted against it")
	}
}

// Two requests that overlapped the refusal's interval, but never each other, were never held
// together: the bound is the most held at one instant, not how many overlapped.
func TestHeldIsPointwiseNotAnOverlapCount(t *testing.T) {
	r := judgeOnce(concurrency(2), held(0, 1*ms, 10*ms+300), held(10*ms+500, 10*ms+600, 50*ms), at(10*ms, 11*ms, evidence.Refused))
	if r.Count != 1 || r.First.HeldOrAdmitted != 1 {
		t.Fatalf("want 1 false reject, at most 1 held at once; got %d %+v", r.Count, r.First)
	}
}

// A request whose release failed holds its slot until stale-after has passed on both clocks a
// limiter may reclaim by: the stamps it was given, and the server's (a slot's TTL).
func TestHeldFailedReleaseHoldsUntilStaleAfterOnBothClocks(t *testing.T) {
	failed := at(0, 1*ms, evidence.Admitted) // released, but the release failed
	failed.ReleasedUs = 2 * ms
	spec := concurrency(1)
	refusedAt := func(sent, stamp int64) evidence.Decision {
		d := at(sent, sent+ms, evidence.Refused)
		d.ClockLoUs, d.ClockHiUs = stamp, stamp
		return d
	}
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
		if r := judgeOnce(spec, failed, refusedAt(c.sent, c.stamp)); (r.Count > 0) != c.blamed {
			t.Errorf("%s: false rejects %d, want blamed=%v", c.name, r.Count, c.blamed)
		}
	}
	spec.Rules.NoStaleAfter = true // the script is not told stale-after: it may hold it for ever
	if r := judgeOnce(spec, failed, refusedAt(time.Hour.Microseconds(), time.Hour.Microseconds())); r.Count != 0 {
		t.Errorf("a failed slot of a script without stale-after counted as reclaimed")
	}
}

// An acquire of unknown outcome may have taken a slot, and may have run after its error came
// back, so on the server's clock it is never certainly reclaimed.
func TestHeldUnknownAcquireIsNeverReclaimed(t *testing.T) {
	r := judgeOnce(concurrency(1), at(0, 1*ms, evidence.Unknown), at(time.Hour.Microseconds(), time.Hour.Microseconds()+ms, evidence.Refused))
	if r.Count != 0 {
		t.Errorf("a refusal an hour after an acquire of unknown outcome was blamed")
	}
}

// The groups refusals are judged in keep only what holds for every member.
func TestHeldGroupOfRefusalsIsJudgedByItsUnion(t *testing.T) {
	a, b := at(10*ms, 10*ms+100, evidence.Refused), at(10*ms+200, 10*ms+900, evidence.Refused) // one group: sent in the same ms
	// Held only while b may have been decided: b is not wrong, so neither is the group.
	r := judgeOnce(concurrency(1), held(10*ms+500, 10*ms+600, 10*ms+800), a, b)
	if r.Count != 0 {
		t.Errorf("a group blamed although one member may have been decided with the slot held")
	}
}

func window(kind testKind, limit int64) refusal.Spec {
	return kind.spec(refusal.Spec{Limit: limit, Window: 100 * ms, Horizon: 5000 * ms})
}

// stamped is a call sent at sent with its own stamp.
func stamped(sent, replied, stamp int64, o evidence.Outcome) evidence.Decision {
	return evidence.Decision{SentUs: sent, RepliedUs: replied, ClockLoUs: stamp, ClockHiUs: stamp, Outcome: o}
}

func TestSlidingRefusalUnderTheLimitIsFalse(t *testing.T) {
	r := judgeOnce(window(slidingKind, 2), at(0, 1*ms, evidence.Admitted), at(50*ms, 51*ms, evidence.Refused))
	if r.Count != 1 || r.First.HeldOrAdmitted != 1 {
		t.Fatalf("one admit of two in the window, refused: got %d %+v", r.Count, r.First)
	}
	// An admit stamped just over a window before counts still: the script rounds to whole ms.
	r = judgeOnce(window(slidingKind, 1), stamped(0, 1*ms, -51*ms, evidence.Admitted), at(50*ms, 51*ms, evidence.Refused))
	if r.Count != 0 {
		t.Errorf("an admit within the rounding of the window's start not counted")
	}
	r = judgeOnce(window(slidingKind, 1), stamped(0, 1*ms, -53*ms, evidence.Admitted), at(50*ms, 51*ms, evidence.Refused))
	if r.Count != 1 {
		t.Errorf("an admit stamped past the window and the rounding still counted")
	}
}

// A list of the newest admits (alisaifee/limits) counts every admit that ran after the oldest
// one still within the window, whatever its own stamp: an old-stamped admit that ran late.
func TestSlidingCountsAnAdmitThatRanAfterOneInTheWindow(t *testing.T) {
	inWindow := stamped(0, 1*ms, 0, evidence.Admitted)
	late := stamped(2*ms, 3*ms, -500*ms, evidence.Admitted) // stamped long ago, ran after inWindow
	r := judgeOnce(window(slidingKind, 2), inWindow, late, at(50*ms, 51*ms, evidence.Refused))
	if r.Count != 0 {
		t.Errorf("a list-style limiter at its limit blamed")
	}
	// Answered before the window's oldest admit was even sent: it ran before it, and drops out.
	early := stamped(-3*ms, -2*ms, -500*ms, evidence.Admitted)
	if r = judgeOnce(window(slidingKind, 2), inWindow, early, at(50*ms, 51*ms, evidence.Refused)); r.Count != 1 {
		t.Errorf("an admit that ran before every admit in the window was counted")
	}
}

// An admit of unknown outcome may run at any time after it was sent: it counts against every
// later refusal.
func TestWindowUnknownAdmitCountsForEver(t *testing.T) {
	r := judgeOnce(window(slidingKind, 1), at(0, 1*ms, evidence.Unknown), at(time.Hour.Microseconds(), time.Hour.Microseconds()+ms, evidence.Refused))
	if r.Count != 0 {
		t.Errorf("a refusal after an admit of unknown outcome was blamed")
	}
}

func TestFixedWindowAligned(t *testing.T) {
	spec := window(fixedKind, 1)
	spec.Aligned = true
	// The previous window's admit does not count in this one.
	if r := judgeOnce(spec, at(99*ms, 99*ms+500, evidence.Admitted), at(100*ms, 101*ms, evidence.Refused)); r.Count != 1 {
		t.Errorf("an admit of the previous aligned window counted")
	}
	if r := judgeOnce(spec, at(100*ms, 100*ms+500, evidence.Admitted), at(199*ms, 199*ms+800, evidence.Refused)); r.Count != 0 {
		t.Errorf("an admit of the same aligned window not counted")
	}
	// outUnknown alignment: a window opened by a first hit, or a TTL running on the server's
	// clock, may hold both.
	spec.Aligned = false
	if r := judgeOnce(spec, at(99*ms, 99*ms+500, evidence.Admitted), at(100*ms, 101*ms, evidence.Refused)); r.Count != 0 {
		t.Errorf("a window of unknown alignment blamed for an admit a millisecond before")
	}
	if r := judgeOnce(spec, at(0, 1*ms, evidence.Admitted), at(110*ms, 111*ms, evidence.Refused)); r.Count != 1 {
		t.Errorf("an admit more than a window (and its allowances) before counted")
	}
}

func bucket(burst int64, perSec float64) refusal.Spec {
	return bucketKind.spec(refusal.Spec{Limit: burst, RatePerSec: perSec, Window: time.Second.Microseconds(), Horizon: 5000 * ms})
}

func TestBucketLevel(t *testing.T) {
	// A fresh bucket of 2 at 10/s: one draw at 0; refused at 30ms it certainly held 1 + 0.3.
	r := judgeOnce(bucket(2, 10), at(0, 1*ms, evidence.Admitted), at(30*ms, 31*ms, evidence.Refused))
	if r.Count != 1 || r.First.TokensLeft == nil || math.Abs(*r.First.TokensLeft-1.28) > 0.01 {
		t.Fatalf("want 1 false reject with about 1.28 tokens (2ms of rounding taken off), got %d %+v", r.Count, r.First)
	}
	// With exactly one token and no time to refill, rounding may have taken a sliver: no claim.
	if r := judgeOnce(bucket(2, 10), at(0, 1*ms, evidence.Admitted), at(0, 1*ms, evidence.Refused)); r.Count != 0 {
		t.Errorf("blamed at exactly one token")
	}
	// Stepped (given the window): nothing refills before a whole step has passed.
	spec := bucket(2, 10)
	spec.Rules.RefillStep = 500 * time.Millisecond
	if r := judgeOnce(spec, at(0, 1*ms, evidence.Admitted), at(0, 1*ms, evidence.Admitted), at(400*ms, 401*ms, evidence.Refused)); r.Count != 0 {
		t.Errorf("a stepped bucket blamed before its step")
	}
	if r := judgeOnce(spec, at(0, 1*ms, evidence.Admitted), at(0, 1*ms, evidence.Admitted), at(700*ms, 701*ms, evidence.Refused)); r.Count != 1 {
		t.Errorf("a stepped bucket not blamed a step and 2 tokens of refill later")
	}
	// A stepped bucket counts whole tokens: full at 3, it drew 2 and refused within its step
	// though the one token left is certain (a continuous bucket would have refilled 4 by then).
	spec = bucket(3, 10)
	spec.Rules.RefillStep = 500 * time.Millisecond
	r = judgeOnce(spec, at(0, 1*ms, evidence.Admitted), at(0, 1*ms, evidence.Admitted), at(400*ms, 401*ms, evidence.Refused))
	if r.Count != 1 || r.First.TokensLeft == nil || *r.First.TokensLeft != 1 {
		t.Errorf("a stepped bucket's certain last token: %d false rejects, %+v", r.Count, r.First)
	}
	// But given the window the bucket may as well be continuous and round its times: with no
	// time to refill, that one may have charged the draws a sliver more. No claim.
	if r := judgeOnce(spec, at(0, 1*ms, evidence.Admitted), at(0, 1*ms, evidence.Admitted), at(0, 1*ms, evidence.Refused)); r.Count != 0 {
		t.Errorf("blamed at exactly one token where a continuous bucket may have rounded")
	}
}

// GCRA charges a draw that arrives stamped late at its TAT, not at its stamp: bounding by
// stamps alone would blame it. Burst 3 at 1 per second: draws stamped 1s, then 0s, then 1s,
// in that order of running; at 1s the TAT is 4s and the GCRA refuses, though only 3 draws are
// stamped within any second.
func TestBucketCountsDrawsByWhenTheyRan(t *testing.T) {
	s := int64(time.Second.Microseconds())
	r := judgeOnce(bucket(3, 1),
		stamped(0, 1*ms, s, evidence.Admitted), stamped(2*ms, 3*ms, 0, evidence.Admitted), stamped(4*ms, 5*ms, s, evidence.Admitted),
		stamped(6*ms, 7*ms, s, evidence.Refused))
	if r.Count != 0 {
		t.Errorf("the shipped GCRA's refusal after a late-stamped draw was blamed")
	}
}

// A refused call stamped ahead moves a textbook bucket's last-refill time (last = max(last,
// now)): a later call stamped before it pays for the gap, 3 tokens here, and may rightly be
// refused though 6 refilled by its own stamp. (The call stamped ahead was itself refused with
// room, and is blamed.)
func TestBucketRefusalStampedAheadCosts(t *testing.T) {
	spec := bucket(2, 10) // a token per 100ms
	draw := at(0, 1*ms, evidence.Admitted)
	ahead := stamped(500*ms, 501*ms, 900*ms, evidence.Refused)
	k := stamped(600*ms, 601*ms, 600*ms, evidence.Refused)
	if r := judgeOnce(spec, draw, k); r.Count != 1 {
		t.Fatalf("alone, the refusal 600ms after one draw is not blamed")
	}
	if r := judgeOnce(spec, draw, ahead, k); r.Count != 1 || r.First.SentMs != 500 {
		t.Errorf("blamed after a call stamped ahead moved the bucket's clock: %d, first %+v", r.Count, r.First)
	}
}

// A low-water mark is never later than a call that is being sent.
func TestLowWaterMark(t *testing.T) {
	w := refusal.NewLowWater(2)
	if m := w.Mark(100); m != 100 {
		t.Errorf("idle: mark %d, want now", m)
	}
	w.Enter(1, 40)
	if m := w.Mark(100); m != 40 {
		t.Errorf("busy since 40: mark %d", m)
	}
	w.Leave(1)
	if m := w.Mark(100); m != 100 {
		t.Errorf("left: mark %d", m)
	}
}

// Refusals are judged only once everything sent before their reply is in: an admit recorded
// in a later batch still counts against a refusal pending from an earlier one.
func TestRefusalWaitsForTheLowWaterMark(t *testing.T) {
	r := refusal.New(concurrency(1))
	r.Record(at(10*ms, 11*ms, evidence.Refused))
	r.JudgeBefore(10 * ms) // a call sent from 10ms on may still be in flight: the refusal waits
	r.Record(held(10*ms+200, 10*ms+500, 20*ms))
	r.JudgeBefore(refusal.Forever)
	if r.Count != 0 {
		t.Errorf("a refusal was judged before the admit that held the slot was recorded")
	}
}

// unjudgedFrom is where a key's refusals not judged yet start, between its batches as after
// them: the earliest refusal recorded since its last batch, or of a group its last batch left
// waiting, or else the mark up to which every call was recorded; forever once closed. The
// recorders keep the refusals from there on (trace.Recorder.HoldUnjudged).
func TestUnjudgedFromIsTheEarliestRefusalNotJudged(t *testing.T) {
	r := refusal.New(concurrencyKind.spec(refusal.Spec{Limit: 20, StaleAfter: 10_000_000, Horizon: 5_000_000}))
	refused := func(sent int64) evidence.Decision {
		return evidence.Decision{SentUs: sent, RepliedUs: sent + 300, ClockLoUs: sent, ClockHiUs: sent, Outcome: evidence.Refused}
	}
	if got := r.UnjudgedFrom(5_000); got != 5_000 {
		t.Fatalf("nothing recorded: %d, want the mark 5000", got)
	}
	r.Record(refused(10_000))
	r.Record(refused(20_000))
	if got := r.UnjudgedFrom(30_000); got != 10_000 {
		t.Fatalf("two refusals recorded, none judged: %d, want the first one's 10000", got)
	}
	r.JudgeBefore(15_000) // the first is answered before the low water, the second after
	if got := r.UnjudgedFrom(30_000); got != 20_000 {
		t.Fatalf("after a batch that judged the first: %d, want the waiting one's 20000", got)
	}
	r.Record(refused(25_000))
	if got := r.UnjudgedFrom(30_000); got != 20_000 {
		t.Fatalf("a later refusal recorded: %d, want still 20000", got)
	}
	r.JudgeBefore(40_000)
	if got := r.UnjudgedFrom(40_000); got != 40_000 {
		t.Fatalf("after a batch that judged everything: %d, want the mark 40000", got)
	}
	r.Close()
	if got := r.UnjudgedFrom(40_000); got != refusal.Forever {
		t.Fatalf("closed: %d, want forever", got)
	}
}
