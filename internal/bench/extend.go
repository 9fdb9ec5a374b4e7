package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/human"
)

// A run loads for --duration, or --requests decisions a strategy, when that gathers the evidence
// its verdicts need. Where it does not (a strategy whose verdict could only be "not judged": the
// overshoot it would have proven no better than the limit, or too few admits judged), the engine
// loads on, asking again about once a second (duration) or every half --requests (requests),
// until every strategy can be judged or the cap is reached (MaxDuration, MaxRequests). A bursty
// load whose bursts fell badly, a busy machine's late replies: one run's bad luck is evened out
// by more of the same load, never by a weaker verdict.

// Extension says that a run loaded past its bound, how far and why.
type Extension struct {
	// To is how long the run loaded in all; Requests, in a run bounded by decisions, how many
	// decisions each strategy was allowed in all.
	To       time.Duration
	Requests int64
	// Why is what the evidence lacked at the bound: the first strategy that could not be
	// judged, and why.
	Why string
	// Capped: the run reached its cap with a strategy still unjudged, so its verdict says why
	// no load of that length could judge it.
	Capped bool
}

// probeEvery is how often a run past its duration asks again whether its evidence suffices.
const probeEvery = time.Second

// extender decides, on the engine's loop, when a run past its bound has the evidence it needs.
type extender struct {
	cfg       Config
	ext       *Extension
	nextProbe time.Time
}

// enabled reports whether the run may load past its duration.
func (x *extender) enabled() bool {
	return x.cfg.Unjudged != nil && x.cfg.MaxDuration > x.cfg.Duration
}

// durationDone reports whether a run bounded by time should stop at active (its unpaused
// time), now: before its duration never; after it, once every strategy can be judged, or at
// its cap.
func (x *extender) durationDone(runs []*strategyState, active time.Duration, now time.Time) bool {
	if x.cfg.Duration <= 0 || active < x.cfg.Duration {
		return false
	}
	if !x.enabled() {
		return true
	}
	if active >= x.cfg.MaxDuration {
		if x.ext != nil {
			x.ext.Capped = x.unjudged(runs) != ""
		}
		return true
	}
	if now.Before(x.nextProbe) {
		return false
	}
	x.nextProbe = now.Add(probeEvery)
	why := x.unjudged(runs)
	if why == "" {
		return true
	}
	if x.ext == nil {
		x.ext = &Extension{Why: fmt.Sprintf("at %s %s", human.Elapsed(x.cfg.Duration), why)}
	}
	return false
}

// requestsStep is how far a run bounded by decisions raises a strategy's bound at a time.
func (x *extender) requestsStep() int64 { return max(1, x.cfg.Requests/2) }

// requestsDone decides, for each strategy that has made every decision its bound allows, whether
// it stops (its evidence suffices, or its cap is reached) or goes on for another step.
func (x *extender) requestsDone(runs []*strategyState) {
	for _, r := range runs {
		g := r.gate
		if g == nil || !g.waiting() || r.attempts.Load() < g.bound.Load() {
			continue // still deciding, or the last calls not yet counted
		}
		why := x.why(r)
		switch {
		case why == "":
			g.close()
		case g.bound.Load() >= x.cfg.MaxRequests:
			if x.ext != nil {
				x.ext.Capped = true
			}
			g.close()
		default:
			if x.ext == nil {
				x.ext = &Extension{Why: fmt.Sprintf("after %s decisions %s", human.Count(x.cfg.Requests), why)}
			}
			to := min(g.bound.Load()+x.requestsStep(), x.cfg.MaxRequests)
			x.ext.Requests = max(x.ext.Requests, to)
			g.raise(to)
		}
	}
}

// unjudged is why the first strategy that could not be judged now could not, or "".
func (x *extender) unjudged(runs []*strategyState) string {
	for _, r := range runs {
		if why := x.why(r); why != "" {
			return why
		}
	}
	return ""
}

// why asks the run's rule (Config.Unjudged) of r's evidence so far, its power included.
func (x *extender) why(r *strategyState) string {
	st := r.probe()
	if why := x.cfg.Unjudged(st); why != "" {
		return st.Name + ": " + why
	}
	return ""
}

// finish is the extension to report, once the load has ended at active; nil when the run
// stopped at its bound.
func (x *extender) finish(active time.Duration) *Extension {
	if x.ext == nil {
		return nil
	}
	x.ext.To = active
	return x.ext
}

// requestGate bounds a strategy's decisions (--requests): each takes one, and once the bound is
// reached its workers wait until the engine raises it (the evidence was thin) or closes the
// gate (they stop).
type requestGate struct {
	issued, bound atomic.Int64
	mu            sync.Mutex
	changed       chan struct{} // closed and replaced whenever the bound rises or the gate closes
	closed        bool
}

// newRequestGate allows bound decisions; a gate that will never be raised is closed from the
// start, so its workers stop at the bound without waiting.
func newRequestGate(bound int64, extensible bool) *requestGate {
	g := &requestGate{changed: make(chan struct{}), closed: !extensible}
	g.bound.Store(bound)
	return g
}

// take reserves one decision: ok when the bound allows it; otherwise wait tells whether the
// bound may still rise (wait on changed), or the strategy is done.
func (g *requestGate) take() (ok, wait bool) {
	for {
		n := g.issued.Load()
		if n >= g.bound.Load() {
			g.mu.Lock()
			defer g.mu.Unlock()
			return false, !g.closed
		}
		if g.issued.CompareAndSwap(n, n+1) {
			return true, false
		}
	}
}

// wait blocks until the bound rises or the gate closes; false when ctx ended or it closed.
func (g *requestGate) wait(ctx context.Context) bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	ch := g.changed
	g.mu.Unlock()
	if g.issued.Load() < g.bound.Load() {
		return true // raised between take and now
	}
	select {
	case <-ch:
		g.mu.Lock()
		defer g.mu.Unlock()
		return !g.closed
	case <-ctx.Done():
		return false
	}
}

// waiting reports whether every decision the bound allows was taken and the engine has not
// decided yet.
func (g *requestGate) waiting() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.closed && g.issued.Load() >= g.bound.Load()
}

// raise allows to decisions in all.
func (g *requestGate) raise(to int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bound.Store(to)
	close(g.changed)
	g.changed = make(chan struct{})
}

// close stops the strategy at its bound.
func (g *requestGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		close(g.changed)
	}
}
