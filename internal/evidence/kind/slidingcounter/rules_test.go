package slidingcounter

import (
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

// epochSpec is a limit of 10 a second on epoch-aligned windows, told the time in ms.
var epochSpec = Spec{Limit: 10, Window: time.Second, Align: EpochAligned, Grain: time.Millisecond}

// at is n admits stamped ms after the epoch's second 1000, each ran within a millisecond.
func at(ms int64, n int, o evidence.Outcome) []decision {
	var out []decision
	for range n {
		out = append(out, stamped((1000_000+ms)*1000, 1000, o))
	}
	return out
}

func concat(parts ...[]decision) []decision {
	var out []decision
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestAFullPreviousWindowLeavesRoomOnlyAsItsWeightFalls(t *testing.T) {
	// 10 admitted in the previous window; 55% into the next (its clock up to a millisecond later
	// still: the grain), its weight is at least 0.449: 4.49 of it count, so every correct member
	// admits 6 there, and the floored one never a 7th.
	prev := at(100, 10, evidence.Admitted)
	for _, c := range []struct {
		n      int
		proven bool
	}{{6, false}, {7, true}} {
		res := check(epochSpec, concat(prev, at(1550, c.n, evidence.Admitted)))
		if res.Proven != c.proven {
			t.Errorf("%d admitted at 0.55 into the window after 10: proven %v, want %v (%+v)", c.n, res.Proven, c.proven, res)
		}
	}
	res := check(epochSpec, concat(prev, at(1550, 12, evidence.Admitted)))
	want := "12 admitted in window [1.000s, 2.000s) with 10 in the previous window at weight 0.45: even floored, 12 + 4 > 10"
	if got := res.First.How(1000_000_000); got != want {
		t.Errorf("the how-line:\n got %s\nwant %s", got, want)
	}
	if res.Peak != 16 || res.Overshoot != 6 || res.Events != 1 {
		t.Errorf("peak %d, overshoot %d, events %d; want 16 (12 + 4.49 of the previous), 6 and 1", res.Peak, res.Overshoot, res.Events)
	}
}

func TestAnIdleWindowBeforeLeavesTheWholeLimit(t *testing.T) {
	// Two windows back is never read: 10 in window 0, none in window 1, 10 at the start of window 2.
	ds := concat(at(0, 10, evidence.Admitted), at(2001, 10, evidence.Admitted))
	if res := check(epochSpec, ds); res.Proven || res.Peak != 10 {
		t.Errorf("the limit after an empty window: %+v; want held at a peak of 10", res)
	}
	if res := check(epochSpec, concat(ds, at(2002, 1, evidence.Admitted))); !res.Proven || res.Overshoot != 1 {
		t.Errorf("one more: %+v; want an overshoot of 1", res)
	}
}

func TestAdmitsThatMayHaveRunAfterTheLaterOnesAreNotCounted(t *testing.T) {
	// The previous window's last 10 admits, stamped 999.5ms in, may have run as late as 30ms after:
	// after the admits 10ms into the next window, which then owe them nothing.
	var prev []decision
	for range 10 {
		prev = append(prev, stamped(1000_999_500, 30_000, evidence.Admitted))
	}
	late := concat(prev, at(1010, 10, evidence.Admitted))
	if res := check(epochSpec, late); res.Proven {
		t.Errorf("admits that may have run before the previous window's: blamed %+v", res)
	}
	// Run within a millisecond, they count at a weight of 0.99.
	for i := range prev {
		prev[i] = stamped(1000_999_500, 1000, evidence.Admitted)
	}
	if res := check(epochSpec, concat(prev, at(1010, 10, evidence.Admitted))); !res.Proven {
		t.Errorf("admits that certainly ran after the previous window's: not proven %+v", res)
	}
}

func TestTheRoundingsAgreeOnlyFarFromTheLimit(t *testing.T) {
	// p = 10 at 0.55 in: the share 4.5 is 4 floored, 5 rounded or up. Floored, 6 fit; so the
	// 6th is held (only the rounded and the ceiling refuse it), and a refusal of the 5th is wrong
	// for every member (4.5 + 4 < 10 even rounded up: 5 + 4 = 9 < 10), of the 6th is not.
	prev := at(100, 10, evidence.Admitted)
	if res := check(epochSpec, concat(prev, at(1550, 6, evidence.Admitted))); res.Proven {
		t.Errorf("6 at 0.55 after 10: blamed %+v", res)
	}
	for _, c := range []struct {
		admitted int
		wrong    bool
	}{{4, true}, {5, false}} {
		fr := falseRejects(epochSpec, concat(prev, at(1550, c.admitted, evidence.Admitted), at(1550, 1, evidence.Refused)))
		if (len(fr) > 0) != c.wrong {
			t.Errorf("a refusal after %d at 0.55: %d false rejects, want wrong=%v", c.admitted, len(fr), c.wrong)
		}
	}
	fr := falseRejects(epochSpec, concat(prev, at(1550, 4, evidence.Admitted), at(1550, 1, evidence.Refused)))
	want := "refused with at most 4 admitted in window [1.000s, 2.000s) and 10 in the previous at weight 0.45: even rounded up, 4 + 5 < 10"
	if got := fr[0].How(1000_000_000); got != want {
		t.Errorf("the false reject's words:\n got %s\nwant %s", got, want)
	}
}

func TestACallOfUnknownOutcomeMayHaveAdmittedButProvesNothing(t *testing.T) {
	prev := at(100, 10, evidence.Admitted)
	// Four admitted and five unknown at 0.55: a refusal may have had 9 + 5 against it.
	ds := concat(prev, at(1550, 4, evidence.Admitted), at(1540, 5, evidence.Unknown), at(1550, 1, evidence.Refused))
	if fr := falseRejects(epochSpec, ds); len(fr) > 0 {
		t.Errorf("a refusal after calls that may have admitted: %d false rejects", len(fr))
	}
	// Nor do unknown calls count as admits for an overshoot.
	if res := check(epochSpec, concat(prev, at(1600, 6, evidence.Admitted), at(1600, 20, evidence.Unknown))); res.Proven {
		t.Errorf("calls of unknown outcome taken for admits: %+v", res)
	}
}

func TestAtAnyAlignmentEveryPhaseMustBeRuledOut(t *testing.T) {
	any := epochSpec
	any.Align = AnyAlignment
	// 10 at once, then 10 at once 500ms later: windows starting between them hold both halves
	// apart, with the first at a weight up to 1 - 0.5 = 0.5 (5 counted), so any phase but those
	// is ruled out, and those hold them.
	if res := check(any, concat(at(0, 10, evidence.Admitted), at(500, 10, evidence.Admitted))); res.Proven {
		t.Errorf("two bursts half a window apart, any alignment: blamed %+v", res)
	}
	if res := check(epochSpec, concat(at(0, 10, evidence.Admitted), at(500, 10, evidence.Admitted))); !res.Proven {
		t.Errorf("two bursts half a window apart in one epoch window: not proven %+v", res)
	}
	// 10 every 100ms for a window and a half: every window of any phase holds more than 10.
	var ds []decision
	for ms := int64(0); ms < 1500; ms += 100 {
		ds = append(ds, at(ms, 10, evidence.Admitted)...)
	}
	res := check(any, ds)
	if !res.Proven || !strings.HasSuffix(res.First.How(0), "(every other alignment of the windows was ruled out by then)") {
		t.Errorf("a limit every 100ms, any alignment: %+v", res)
	}
}

func TestATimedCallsClockIsAnywhereInItsInterval(t *testing.T) {
	timedSpec := Spec{Limit: 10, Window: time.Second, Timing: Intervals, Grain: time.Millisecond}
	// 10 answered within the first 100ms, 10 sent from 900ms on: a window beginning between them
	// holds them apart, the first 10 weighing at most 0.2 by the time the others ran.
	var ds []decision
	for i := range int64(10) {
		ds = append(ds, timed(0, 100_000, evidence.Admitted), timed(900_000+i*5000, 920_000+i*5000, evidence.Admitted))
	}
	if res := check(timedSpec, ds); res.Proven {
		t.Errorf("10 and 10, 800ms apart: blamed %+v", res)
	}
	// 15 more, from 500ms on: every window of any phase holds more than 10, or 6 or more after a
	// full one.
	for i := range int64(15) {
		ds = append(ds, timed(500_000+i*20_000, 520_000+i*20_000, evidence.Admitted))
	}
	if res := check(timedSpec, ds); !res.Proven {
		t.Errorf("10, then 25 within a window: not proven %+v", res)
	}
}

// A clump of admits whose clocks straddle a window's edge is counted in neither window: the phases
// within a clump's width of its edge are ruled out only by other windows.
func TestAClumpStraddlingAWindowsEdgeIsCountedInNeither(t *testing.T) {
	timedSpec := Spec{Limit: 10, Window: time.Second, Timing: Intervals, Grain: time.Millisecond}
	var ds []decision
	for range 30 {
		ds = append(ds, timed(0, 50_000, evidence.Admitted))
	}
	if res := check(timedSpec, ds); res.Proven {
		t.Errorf("30 admits, each anywhere in the same 50ms: proven %+v, though a window may begin among them", res)
	}
}

func TestASpecSaysWhatIsWrongWithIt(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Limit: 0, Window: time.Second}, "the limit must be at least 1"},
		{Spec{Limit: 1, Window: time.Microsecond}, "the window must be at least 1ms"},
		{Spec{Limit: 1, Window: time.Second, Grain: -1}, "grain must not be negative"},
		{Spec{Limit: 1, Window: time.Second, Align: EpochAligned, Timing: Intervals}, "epoch-aligned windows need stamped decisions"},
	} {
		if err := c.spec.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.spec, err, c.want)
		}
	}
	if err := epochSpec.Validate(); err != nil {
		t.Errorf("a valid spec: %v", err)
	}
}

func TestAClockTooCoarseForTheWindowJudgesNothing(t *testing.T) {
	coarse := Spec{Limit: 1, Window: time.Second, Grain: time.Second}
	res := check(coarse, at(0, 5, evidence.Admitted))
	if res.Proven || res.Unjudged != 5 {
		t.Errorf("a clock of whole seconds on a window of one: %+v; want 5 unjudged", res)
	}
}
