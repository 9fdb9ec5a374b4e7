package judge

import (
	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// refusals judges a group's refusals, where the limiter's state before the run is known: every
// call of a hammer --record strategy named a key of that run only ({key}). The records come in
// the order they were sent, so once a record is read every call sent before it has been: the
// judges are given that mark every so often, as the engine's low-water mark. A record that
// cannot be placed in time (a start or end unknown, out of order) may have taken room at any
// time: the group's refusals are then not judged at all, and none found is kept.
type refusals struct {
	g       *group
	spec    refusal.Spec
	judges  []*refusal.Judge
	scratch *refusal.Scratch
	since   int   // calls recorded since the last pass
	mark    int64 // µs: every call sent before it has been recorded
	stopped string
	first   *refusal.FalseReject // the earliest proven wrong, with its request once found
}

// passEvery is how many calls are recorded between passes of the judges: within what a
// judge keeps of its buffers between passes (a capacity of 1,024, which a slice grown by
// append passes at 833 elements), so they are reused.
const passEvery = 512

func newRefusals(g *group) *refusals {
	return &refusals{g: g, scratch: &refusal.Scratch{}, spec: g.replay.refusalSpec()}
}

// addKey adds the judge of a new limiter key.
func (r *refusals) addKey() {
	j := refusal.New(r.spec)
	j.ShareScratch(r.scratch)
	r.judges = append(r.judges, j)
}

// add records d, and passes the judges every passEvery calls.
func (r *refusals) add(d evidence.Decision) {
	if r.stopped != "" {
		return
	}
	r.judges[d.Key].Record(d)
	r.mark = max(r.mark, d.SentUs)
	if r.since++; r.since >= passEvery {
		r.pass(r.mark)
	}
}

// pass judges every refusal answered before mark, and finds the first one proven wrong's
// record while the ring still holds it.
func (r *refusals) pass(mark int64) {
	r.since = 0
	for _, j := range r.judges {
		j.JudgeBefore(mark)
		if f := j.First; f != nil && (r.first == nil || f.SentMs < r.first.SentMs) {
			first := *f
			first.Request = r.g.refusedRequest(f)
			r.first = &first
		}
	}
}

// stop ends the judging, why saying why: a record that cannot be placed in time may have taken
// room at any time, so no refusal is judged.
func (r *refusals) stop(why string) {
	if r.stopped != "" {
		return
	}
	r.stopped = why
	for _, j := range r.judges {
		j.Close()
	}
}

// finish judges what is left and adds what the judges found to st.
func (r *refusals) finish(st *bench.StrategySnapshot) {
	if r.stopped != "" {
		st.RefusalsUnjudged, st.NoRefusalJudged = r.stopped, true
		return
	}
	r.pass(refusal.Forever)
	for _, j := range r.judges {
		st.FalseRejects += j.Count
		if j.Worst != nil && (st.Tightest == nil || j.Worst.Room() < st.Tightest.Room()) {
			st.Tightest = j.Worst
		}
	}
	st.FirstFalseReject = r.first
}
