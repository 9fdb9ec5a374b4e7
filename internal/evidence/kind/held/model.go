// Package held is the concurrency limiter's evidence: requests held from their admit to their
// release, at most the limit at once.
package held

import (
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// Model is the concurrency limiter's evidence.
var Model model

type model struct{}

// Checker is the witness of the requests held at once, or another process's shared with it
// (--witness redis); for an endpoint (it promises a hold D, and an admit certainly holds its slot
// over [Replied - D, Sent + D]) the held spans.
func (model) Checker(s overshoot.Spec, _ int64) overshoot.Checker {
	switch {
	case s.Timing == overshoot.OnEndpoint:
		return overshoot.NewHeldSpans(s.Limit, s.Hold)
	case s.Witness != nil:
		return s.Witness(s.Key)
	}
	w := overshoot.NewWitness(s.Limit, overshoot.WitnessStale(s.StaleAfter, s.Quantum, s.StaleUnit).Milliseconds())
	w.CountLiveFor(overshoot.WitnessLive(s.StaleAfter, s.StaleUnit).Milliseconds())
	return w
}

// Clock: the witness counts what is held, whatever the stamps' order.
func (model) Clock(overshoot.Limits, bool) overshoot.Clock { return overshoot.Clock{Aligned: true} }

// TooLate: a held request counts however late its call came.
func (model) TooLate(overshoot.Spec, evidence.Decision) bool { return false }

func (model) Rule(s refusal.Spec) (refusal.Rule, bool) { return refusal.NewHeldRule(s), false }

func (model) Counted() string    { return "held" }
func (model) Unit() string       { return "held at once" }
func (model) Alignable() bool    { return false }
func (model) TwoClocks() bool    { return false }
func (model) LateByWindow() bool { return false }
