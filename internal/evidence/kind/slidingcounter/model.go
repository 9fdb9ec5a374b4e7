package slidingcounter

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// Model is the two-counter estimate's evidence (kind.Model): its checker of overshoot on the
// stamps and over intervals (checker.go), its refusal rule (rule.go), its power (power.go) and how
// it is told.
var Model model

type model struct{}

// specOf is the promise a key's overshoot evidence is judged against: windows on the epoch where
// the contract names them so (the clock given, stamped), else of any alignment; the clock read in
// the unit the script is told the time in, a millisecond at the finest.
func specOf(limit int64, window time.Duration, epochAligned, intervals bool, quantum time.Duration) Spec {
	s := Spec{Limit: limit, Window: window, Grain: max(quantum, time.Millisecond)}
	if intervals {
		s.Timing = Intervals
	} else if epochAligned {
		s.Align = EpochAligned
	}
	return s
}

// Checker is the two-counter check of the key's admits, on their stamps or over their calls'
// intervals.
func (model) Checker(s overshoot.Spec, _ int64) overshoot.Checker {
	return newChecker(specOf(s.Limit, s.Window, s.Clock.Aligned, s.Timing != overshoot.OnStamps, s.Quantum))
}

// Clock: the windows are on the epoch where the contract says so; every other allowance is the
// model's own (a call's run-time bounds, the grain, the server clock's drift).
func (model) Clock(_ overshoot.Limits, epochAligned bool) overshoot.Clock {
	return overshoot.Clock{Aligned: epochAligned}
}

// TooLate: the checker leaves out what its bounds cannot place (an admit run-timed more loosely
// than a tenth of the window), and counts it unjudged itself.
func (model) TooLate(overshoot.Spec, evidence.Decision) bool { return false }

// Rule is the two-counter refusal rule, grouped by the stamps' millisecond as the windows'.
func (model) Rule(s refusal.Spec) (refusal.Rule, bool) { return newRule(s), !s.Server }

func (model) Counted() string    { return "weighed in its window and the one before" }
func (model) Unit() string       { return "per window" }
func (model) Alignable() bool    { return true }
func (model) TwoClocks() bool    { return false }
func (model) LateByWindow() bool { return false }
