package slidingcounter

import (
	"math"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// rule is one key's refusal rule (refusal.Rule): its possible admits kept as they come (refusals,
// the rule of refusal.go), each refusal group judged once every call that can have run before it
// is in. Calls ran, for this rule, within [sent, replied] of the run's monotonic clock, which
// every decision shares; their clocks are the stamps they were given, or on a clock of the
// limiter's own that same interval.
type rule struct {
	r *refusals
	// margin is how far behind the newest clock a later refusal's clock can be (the callers' skew,
	// a call's timeout and a second); newest is the newest clock seen, blind the latest clock of a
	// possible admit forgotten: a refusal whose judging reaches back to it is not judged.
	margin, newest, blind int64
}

func newRule(s refusal.Spec) *rule {
	spec := specOf(s.Limit, time.Duration(s.Window)*time.Microsecond, s.Aligned && !s.Server, s.Server, s.Quantum)
	return &rule{r: newRefusals(spec), margin: 2*s.Skew + s.Horizon + time.Second.Microseconds(), newest: math.MinInt64, blind: math.MinInt64}
}

// possibleOf is d as the rule reads it.
func possibleOf(d evidence.Decision) decision {
	out := decision{ClockLoUs: d.ClockLoUs, ClockHiUs: max(d.ClockLoUs, d.ClockHiUs), RanLoUs: d.SentUs, RanHiUs: d.RepliedUs, Outcome: d.Outcome}
	if d.Outcome == evidence.Unknown {
		out.RanHiUs = forever // it may have run at any time after it was sent
	}
	return out
}

// Add implements refusal.Rule.
func (j *rule) Add(calls []evidence.Decision) {
	for _, d := range calls {
		p := possibleOf(d)
		if d.Outcome == evidence.Unknown && j.r.spec.Timing == Intervals {
			p.ClockHiUs = forever // on a clock of its own: read at any time after it was sent
		}
		j.r.add(p)
		j.newest = max(j.newest, d.ClockHiUs)
	}
}

// AddRefused implements refusal.Rule: a refusal is counted by no correct member.
func (j *rule) AddRefused(*refusal.Group) {}

// Judge implements refusal.Rule: each group as one refusal that ran somewhere in its calls'
// intervals, its clock anywhere in their stamps'; what it proves holds for every member.
func (j *rule) Judge(ready []*refusal.Group, _ int64, verdict refusal.Verdict) {
	for _, g := range ready {
		z := decision{ClockLoUs: g.StampLo, ClockHiUs: g.StampHi, RanLoUs: g.SentMin, RanHiUs: g.RepliedMax, Outcome: evidence.Refused}
		if z.ClockLoUs-j.r.reach() <= j.blind {
			continue
		}
		if f, wrong := j.r.judge(z); wrong {
			verdict(g, f.Current+f.RoundedUp(), math.NaN(), -1)
		}
	}
}

// Settle implements refusal.Rule: the possible admits well behind the newest clock are forgotten.
func (j *rule) Settle(int64) {
	if j.newest == math.MinInt64 {
		return
	}
	cut := j.newest - j.margin - j.r.reach()
	if n := len(j.r.finite); n > 0 && j.r.finite[0].lo+j.r.widest < cut {
		j.blind = max(j.blind, cut)
		j.r.forget(cut)
	}
}
