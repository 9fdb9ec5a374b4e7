package judge

import (
	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/history"
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
	r := &refusals{g: g, scratch: &refusal.Scratch{}}
	if g.replay != nil {
		r.spec = g.replay.refusalSpec()
	} else {
		l := g.j.lim
		r.spec = refusal.Spec{Kind: l.kind, Limit: l.limit, Window: l.window.Microseconds(), RatePerSec: l.rate,
			Server: true, Base: g.j.base / 1000}
	}
	return r
}

// addKey adds the judge of a new limiter key.
func (r *refusals) addKey() {
	j := refusal.New(r.spec)
	j.ShareScratch(r.scratch)
	r.judges = append(r.judges, j)
}

// record tells the judges of an HTTP record's call on key i: an endpoint decided it on its
// own clock somewhere in [start, end], and holds no slot past its answer.
func (r *refusals) record(i int, rec *history.Record, out outcome, id uint64) {
	c := refusal.Call{ID: id, Sent: r.g.j.since(rec.StartNs).Microseconds(), Replied: ceilMicros(r.g.j.since(rec.EndNs)),
		Outcome: refusal.Unknown}
	c.StampLo, c.StampHi = c.Sent, c.Replied
	switch out {
	case admitted:
		c.Outcome, c.Released, c.ReleaseOK = refusal.Admitted, c.Replied, true
	case refused:
		c.Outcome = refusal.Refused
	}
	r.add(i, c)
}

// add records c on key i, and passes the judges every passEvery calls.
func (r *refusals) add(i int, c refusal.Call) {
	if r.stopped != "" {
		return
	}
	r.judges[i].Record(c)
	r.mark = max(r.mark, c.Sent)
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
