// Package sliding is the sliding window's evidence: at most the limit of admits in any
// window-long interval.
package sliding

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// Model is the sliding window's evidence.
var Model model

type model struct{}

// Checker is the sliding check of the stamps; over intervals, the calls' own (a server's TIME,
// an endpoint's clock), or those of the stamps' clock and the real one at once (TwoClocks).
func (model) Checker(s overshoot.Spec, horizonMs int64) overshoot.Checker {
	switch s.Timing {
	case overshoot.OnTwoClocks:
		return TwoClocks(s.Limit, s.Window)
	case overshoot.OnServerClock, overshoot.OnEndpoint:
		return Intervals(s.Limit, s.Window)
	}
	return overshoot.NewSlidingChecker(s.Limit, s.Window.Milliseconds(), horizonMs, false)
}

// Clock: any window-long interval, whatever the stamps' order within the horizon.
func (model) Clock(overshoot.Limits, bool) overshoot.Clock { return overshoot.Clock{Aligned: true} }

// TooLate: the log keeps two windows, so a call that reaches it a window or more after its now may
// rightly see an emptier window.
func (model) TooLate(s overshoot.Spec, d evidence.Decision) bool {
	return time.Duration(d.LateUs)*time.Microsecond >= s.Window
}

func (model) Rule(s refusal.Spec) (refusal.Rule, bool) {
	return NewRule(s, false), !s.Server
}

func (model) Counted() string    { return "admitted in its window" }
func (model) Unit() string       { return "per window" }
func (model) Alignable() bool    { return false }
func (model) TwoClocks() bool    { return true }
func (model) LateByWindow() bool { return true }
