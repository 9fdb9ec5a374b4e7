package refusal_test

import (
	"testing"

	"github.com/limitctl/limitctl/internal/evidence"
)

// On the monotone virtual clock a call's TIME lies in [StampLo, StampHi]: an admit stamped at the
// end of one epoch-aligned window may have been answered a TIME in the next, so the refusal
// judge counts it there (by the sliding bound, which holds for every alignment), and blames a
// refusal only when no admit can have been in its window.
func TestMonotoneRefusalsOfAnAlignedWindow(t *testing.T) {
	spec := window(fixedKind, 1)
	spec.Aligned = true
	straddling := evidence.Decision{SentUs: 99 * ms, RepliedUs: 101 * ms, ClockLoUs: 99 * ms, ClockHiUs: 101 * ms, Outcome: evidence.Admitted}
	refused := at(150*ms, 151*ms, evidence.Refused)
	if r := judgeOnce(spec, straddling, refused); r.Count != 1 {
		t.Fatalf("the aligned rule reads the admit's window from its stamp alone: want it blamed here, got %d", r.Count)
	}
	spec.Monotone = true
	if r := judgeOnce(spec, straddling, refused); r.Count != 0 {
		t.Errorf("an admit that may have read a TIME in the refusal's window was not counted")
	}
	if r := judgeOnce(spec, at(0, 1*ms, evidence.Admitted), refused); r.Count != 1 {
		t.Errorf("an admit certainly a window before the refusal counted on the monotone clock")
	}
}

// On the monotone virtual clock a slow call (a cold connection at the run's start) may have
// read any TIME up to the highest stamp sent by its reply, but a TIME above its own stamp is
// another call's, run before it: the bucket judge bounds each candidate by its own stamp, so
// one slow call does not blind it to every later refusal (bucket.go, add).
func TestMonotoneBucketSeesPastASlowFirstCall(t *testing.T) {
	spec := bucket(3, 10) // a token per 100ms
	spec.Monotone = true
	slow := evidence.Decision{SentUs: 0, RepliedUs: 300 * ms, ClockLoUs: 0, ClockHiUs: 290 * ms, Outcome: evidence.Admitted}
	calls := []evidence.Decision{slow, at(1*ms, 2*ms, evidence.Admitted), at(50*ms, 51*ms, evidence.Refused)}
	// Two draws by 50ms: 1.5 tokens left at the least.
	if r := judgeOnce(spec, calls...); r.Count != 1 {
		t.Errorf("the refusal with 1.5 tokens left after a slow first draw was not blamed")
	}
	// The same calls on the client's clock without the mark: a TIME read by the slow call is
	// its own stamp, and the judge holds the same.
	spec.Monotone = false
	slow.ClockHiUs = slow.ClockLoUs
	if r := judgeOnce(spec, slow, calls[1], calls[2]); r.Count != 1 {
		t.Errorf("the refusal with 1.5 tokens left was not blamed on the client's clock")
	}
}
