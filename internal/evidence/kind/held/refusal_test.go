package held

import (
	"testing"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

const ms = int64(1000)

// kept is the held model that keeps the rule it made, to look inside it.
type kept struct {
	model
	rule *heldJudge
}

func (k *kept) Rule(s refusal.Spec) (refusal.Rule, bool) {
	k.rule = newHeldJudge(s)
	return k.rule, false
}

// An abandoned request forgotten once it is reclaimed for every later refusal is still named in
// the evidence of those refusals.
func TestHeldAbandonedRequestForgottenStillCounts(t *testing.T) {
	m := &kept{}
	r := refusal.New(refusal.Spec{Kind: "concurrency", Model: m, Limit: 2, StaleAfter: 100 * ms, Horizon: 5000 * ms})
	abandoned := func(sent, replied int64) evidence.Decision {
		return evidence.Decision{SentUs: sent, RepliedUs: replied, ClockLoUs: sent, ClockHiUs: sent, Outcome: evidence.Admitted, Abandoned: true}
	}
	r.Record(abandoned(0, 1*ms))
	r.Record(abandoned(1*ms, 2*ms))
	r.JudgeBefore(300 * ms) // nothing to judge; settles: both are reclaimed for any refusal from here on
	if j := m.rule; len(j.open) != 0 || j.reclaimedGone != 2 {
		t.Fatalf("settled: %d kept, %d forgotten; want 0 and 2", len(j.open), j.reclaimedGone)
	}
	r.Record(evidence.Decision{SentUs: 400 * ms, RepliedUs: 401 * ms, ClockLoUs: 400 * ms, ClockHiUs: 400 * ms, Outcome: evidence.Refused})
	r.JudgeBefore(refusal.Forever)
	if r.Count != 1 || *r.First.AbandonedReclaimable != 2 {
		t.Fatalf("got %d %+v, want a false reject naming 2 abandoned", r.Count, r.First)
	}
}
