package overshoot

import (
	"sync"

	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// admitLog collects admitted now values and settles each millisecond that saw admits, in time
// order, once no more admits for it can arrive: horizon ms behind the newest one. Only the
// milliseconds still open are kept, so its memory follows the admits within the horizon, and
// neither adding nor settling walks milliseconds in which nothing was admitted.
type admitLog struct {
	mu       sync.Mutex
	pending  tally.Queue // admits for milliseconds after settled, ascending
	started  bool
	settled  int64 // every ms <= settled has been handed to settleFn
	newest   int64 // newest ms seen
	horizon  int64 // how far behind newest an admit may still arrive
	late     int64 // admits for ms already settled: left out, never moved (moving one would invent evidence)
	settleFn func(ms, n int64)
	history  history // what was settled, for re-judging with phantoms (power.go)
}

func newAdmitLog(horizon int64, settle func(ms, n int64)) *admitLog {
	return &admitLog{horizon: horizon, settleFn: settle}
}

func (r *admitLog) add(ms int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		// Open the horizon behind the first admit too: the next one may carry an older now.
		r.started = true
		r.settled = ms - r.horizon - 1
		r.newest = ms
	}
	if ms <= r.settled {
		// Later than the horizon (the call timeout) allows: its window is already judged.
		// Counting it elsewhere could report overshoot that never happened, so it is left out.
		r.late++
		return
	}
	r.newest = max(r.newest, ms)
	r.pending.Add(ms, 1)
	r.advance(r.newest - r.horizon)
}

// advance settles every pending millisecond up to through, oldest first.
func (r *admitLog) advance(through int64) {
	for r.pending.Len() > 0 && r.pending.Front().Ms <= through {
		e := r.pending.PopFront()
		r.history.keep(e)
		r.settleFn(e.Ms, e.N)
	}
	r.settled = max(r.settled, through)
}

func (r *admitLog) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		r.advance(r.newest)
	}
}

// soFar is every admit logged, by millisecond in time order: the settled history, then the
// milliseconds still open (which Finish would settle). The power is judged on it, so a run whose
// admits are mostly still within the horizon (a window of a minute, the run ten seconds in) is
// not taken for one with no evidence. Call with r.mu held.
func (r *admitLog) soFar() []tally.Count {
	if r.pending.Len() == 0 {
		return r.history.counts
	}
	out := make([]tally.Count, 0, len(r.history.counts)+r.pending.Len())
	out = append(out, r.history.counts...)
	for i := range r.pending.Len() {
		out = append(out, r.pending.At(i))
	}
	return out
}
