package refusal

import (
	"testing"

	"github.com/limitctl/limitctl/internal/limiter"
)

// On the monotone virtual clock a call's TIME lies in [StampLo, StampHi]: an admit stamped at the
// end of one epoch-aligned window may have been answered a TIME in the next, so the refusal
// judge counts it there (by the sliding bound, which holds for every alignment), and blames a
// refusal only when no admit can have been in its window.
func TestMonotoneRefusalsOfAnAlignedWindow(t *testing.T) {
	spec := window(limiter.FixedWindow, 1)
	spec.Aligned = true
	straddling := Call{Sent: 99 * ms, Replied: 101 * ms, StampLo: 99 * ms, StampHi: 101 * ms, Outcome: Admitted}
	refused := at(150*ms, 151*ms, Refused)
	if r := judgeOnce(spec, straddling, refused); r.Count != 1 {
		t.Fatalf("the aligned rule reads the admit's window from its stamp alone: want it blamed here, got %d", r.Count)
	}
	spec.Monotone = true
	if r := judgeOnce(spec, straddling, refused); r.Count != 0 {
		t.Errorf("an admit that may have read a TIME in the refusal's window was not counted")
	}
	if r := judgeOnce(spec, at(0, 1*ms, Admitted), refused); r.Count != 1 {
		t.Errorf("an admit certainly a window before the refusal counted on the monotone clock")
	}
}
