// Package fixed is the fixed window's evidence: at most the limit of admits in each window,
// windows on the epoch or of an alignment the limiter keeps to itself.
package fixed

import (
	"math"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/kind/sliding"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// Model is the fixed window's evidence.
var Model model

type model struct{}

// Checker is the check of the stamps per epoch-aligned window, or, their alignment unknown,
// against every sequence of windows a correct limiter could have used; over intervals, the
// pigeonhole bound that holds for every alignment.
func (model) Checker(s overshoot.Spec, horizonMs int64) overshoot.Checker {
	switch {
	case s.Timing != overshoot.OnStamps:
		return Intervals(s.Limit, s.Window)
	case s.Clock.Aligned:
		return overshoot.NewSlidingChecker(s.Limit, s.Window.Milliseconds(), horizonMs, true)
	}
	c := overshoot.NewUnalignedChecker(s.Limit, s.Window.Milliseconds(), s.Clock.LateMs, horizonMs)
	// Where every call on the key is this process's, each that may have admitted unjudged is told
	// (Unjudged): windows can be anchored at their openers, where the contract says they start
	// there, or the power can say what that would have proven.
	if s.OpenersSeen && s.Shared == nil {
		if s.AnchorAtOpeners {
			c.UseAnchors()
		} else {
			c.NoteOpeners()
		}
	}
	return c
}

// Clock: epoch-aligned windows need no allowance; windows of an unknown alignment judge admits at
// most lateMs late.
func (model) Clock(l overshoot.Limits, epochAligned bool) overshoot.Clock {
	if epochAligned {
		return overshoot.Clock{Aligned: true}
	}
	return overshoot.Clock{LateMs: lateMs(l)}
}

// lateMs is Λ for the unaligned fixed window's evidence: the skew between any two worker clocks,
// a millisecond of rounding, and a round-trip budget (a hundredth of the window, at least 10ms).
// An admit later than that is left out of this evidence.
func lateMs(l overshoot.Limits) int64 {
	budget := max(10*1000, l.Window.Microseconds()/100)
	return int64(math.Ceil(float64(2*l.Skew.Microseconds()+1000+budget) / 1000))
}

// TooLate: a counter lives two windows, so a call a window or more after its now may rightly find
// it gone; one later than the unaligned evidence's Λ is left out of it; and on the monotone
// virtual clock an epoch-aligned window's admit whose TIME may lie in a later window than its
// stamp's (its span straddles a window's end) is in a window unknown
// (overshoot/clock_evidence.go).
func (model) TooLate(s overshoot.Spec, d evidence.Decision) bool {
	late := time.Duration(d.LateUs) * time.Microsecond
	if late >= s.Window || s.Clock.LateMs > 0 && late > time.Duration(s.Clock.LateMs)*time.Millisecond {
		return true
	}
	if !s.Monotone || !s.Clock.Aligned {
		return false
	}
	w := max(1, s.Window.Milliseconds())
	lo := overshoot.Stamp(s.Quantum, time.UnixMicro(d.NowUs)).UnixMilli()
	hi := overshoot.Stamp(s.Quantum, time.UnixMicro(d.ClockHiUs)).UnixMilli()
	return tally.FloorDiv(lo, w) != tally.FloorDiv(hi, w)
}

func (model) Rule(s refusal.Spec) (refusal.Rule, bool) {
	return sliding.NewRule(s, true), !s.Server
}

func (model) Counted() string    { return "admitted in its window" }
func (model) Unit() string       { return "per window" }
func (model) Alignable() bool    { return true }
func (model) TwoClocks() bool    { return false }
func (model) LateByWindow() bool { return true }
