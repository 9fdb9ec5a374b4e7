package bench

import (
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/trace"
)

// How the first overshoot is explained (SPEC section 8, first_overshoot): each worker records
// its decisions' commands in a trace.Recorder (a ring of its latest admits), and the first
// overshoot a checker finds is told as the admits behind it that the rings still hold
// (fold.Explain), once per run.

// traceFirst publishes the first overshoot of key from the workers' rings; later moments (of
// other keys, or tiers of the same evidence) are not kept.
func (s *strategyState) traceFirst(key int, m overshoot.Moment) {
	if !s.tracing.CompareAndSwap(false, true) {
		return
	}
	x := fold.Explain{Limit: s.cfg.Limit, BeginMs: s.beginMs, TwoClocks: s.intervalStamps(),
		ThisProcess: s.run.Admits != nil || s.run.Witness != nil}
	s.firstOver.Store(x.Overshoot(key, m, rings(s.recorders)))
}

// rings are the workers' trace rings as what the engine kept of its admits.
type rings []*trace.Recorder

// Admits implements fold.Kept.
func (r rings) Admits(match func(*fold.Admit) bool) ([]fold.Admit, []trace.Request, int64) {
	var found []fold.Admit
	recs := trace.AdmittedOf(r, nil, func(rec *trace.Record) bool {
		a := fold.Admit{ID: rec.ID, Key: int(rec.Key), AtMs: rec.StampMs, LateNs: rec.LateNs, SentUs: rec.SentUs, RepliedUs: rec.RepliedUs}
		if !match(&a) {
			return false
		}
		found = append(found, a)
		return true
	})
	requests, omitted := trace.Requests(recs)
	return found, requests, omitted
}
