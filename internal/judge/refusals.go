package judge

import (
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/fold"
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
	since   int   // calls recorded since the last pass
	mark    int64 // µs: every call sent before it has been recorded
	stopped string
}

// passEvery is how many calls are recorded between passes of the judges: within what a
// judge keeps of its buffers between passes (a capacity of 1,024, which a slice grown by
// append passes at 833 elements), so they are reused.
const passEvery = 512

// newRefusals judges the refusals of g, a recorded strategy whose every call named a key of its
// run only, by the spec its run judged them by.
func newRefusals(g *group) *refusals {
	g.evidence.JudgeRefusals(g.replay.refusalSpec(), g.refusedRequest)
	return &refusals{g: g}
}

// add records d, and passes the judges every passEvery calls.
func (r *refusals) add(d evidence.Decision) {
	if r.stopped != "" {
		return
	}
	r.g.evidence.Record(d)
	r.mark = max(r.mark, d.SentUs)
	if r.since++; r.since >= passEvery {
		r.since = 0
		r.g.evidence.JudgeBefore(r.mark, 0)
	}
}

// stop ends the judging, why saying why: a record that cannot be placed in time may have taken
// room at any time, so no refusal is judged.
func (r *refusals) stop(why string) {
	if r.stopped != "" {
		return
	}
	r.stopped = why
	r.g.evidence.DropRefusals()
}

// finish judges what is left, or says why none was judged.
func (r *refusals) finish(st *fold.Refusals) {
	if r.stopped != "" {
		st.RefusalsUnjudged, st.NoRefusalJudged = r.stopped, true
		return
	}
	r.g.evidence.JudgeBefore(refusal.Forever, 0)
}
