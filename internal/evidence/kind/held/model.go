// Package held is the concurrency limiter's evidence: requests held from their admit to their
// release, at most the limit at once.
package held

import (
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"time"
)

// Model is the concurrency limiter's evidence.
var Model model

type model struct{}

// Checker is the witness of the requests held at once, or one shared with other processes
// (--witness redis); for an endpoint (it promises a hold D, and an admit certainly holds its slot
// over [Replied - D, Sent + D]) the held spans. A witness records an admit as of the most advanced
// worker clock (up to Skew ahead of any one's): a call decided by it may already have reclaimed a
// held request as abandoned.
func (model) Checker(s overshoot.Spec, _ int64) overshoot.Checker {
	recordedAt := func() int64 { return time.Now().Add(s.Skew).UnixMilli() }
	if s.Now != nil {
		recordedAt = func() int64 { return s.Now().Add(s.Skew).UnixMilli() }
	}
	switch {
	case s.Timing == overshoot.OnEndpoint:
		return overshoot.NewHeldSpans(s.Limit, s.Hold)
	case s.Witness != nil:
		w := s.Witness(s.Key)
		w.RecordAt(recordedAt)
		return w
	}
	w := overshoot.NewWitness(s.Limit, overshoot.WitnessStale(s.StaleAfter, s.Quantum, s.StaleUnit).Milliseconds())
	w.CountLiveFor(overshoot.WitnessLive(s.StaleAfter, s.StaleUnit).Milliseconds())
	w.RecordAt(recordedAt)
	return w
}

// Clock: the witness counts what is held, whatever the stamps' order.
func (model) Clock(overshoot.Limits, bool) overshoot.Clock { return overshoot.Clock{Aligned: true} }

// TooLate: a held request counts however late its call came.
func (model) TooLate(overshoot.Spec, evidence.Decision) bool { return false }

func (model) Rule(s refusal.Spec) (refusal.Rule, bool) { return newHeldJudge(s), false }

func (model) Counted() string    { return "held" }
func (model) Unit() string       { return "held at once" }
func (model) Alignable() bool    { return false }
func (model) TwoClocks() bool    { return false }
func (model) LateByWindow() bool { return false }
