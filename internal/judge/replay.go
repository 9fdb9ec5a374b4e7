package judge

import (
	"container/heap"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/history"
)

// A hammer --record file's strategy, Redis or HTTP, is judged again by the rules its run judged
// it by: its header names the strategy's target, clock, alignment, time quantum and allowances
// (the engine's bench.StrategyRun; an HTTP target's evidence is its requests' intervals and the
// hold it promised), and each call what its evidence was told (the time it was given, the
// time an admit was judged at, how late, over which interval; its refusal judges' outcome,
// release and stamps). The evidence is the engine's own (bench.EvidenceSpec, bench.RefusalSpec),
// fed in the order the calls were sent. The concurrency witness counts a request from its
// acquire's reply until its release was sent, so its admits and releases are told in the
// order of those instants: each record's two events wait in a queue until no record still to
// come can have an earlier one (every later record was sent later).

// replay is a recorded strategy's judging: its group's run is the one its header names.
type replay struct {
	g       *group
	held    bool       // the concurrency witness: admits and releases told in time order
	events  eventQueue // the witness's events not told yet
	now     time.Time  // the witness's clock: the instant of the event being told
	beginUs int64      // the run's start on the stamps' clock
}

func newReplay(g *group, s *history.RecordedStrategy, h *history.RunHeader) (*replay, error) {
	l := g.j.lim
	endpoint := s.Target == history.TargetHTTP
	rp := &replay{g: g, held: l.kind.Describe().Releases && !endpoint, beginUs: s.BeginUs}
	us := func(n int64) time.Duration { return time.Duration(n) * time.Microsecond }
	g.cfg.Horizon, g.cfg.Now = us(h.HorizonUs), func() time.Time { return rp.now }
	// A Redis strategy is judged by the clock, alignment, quantum and allowances its header names;
	// an endpoint as any endpoint's records are (newGroup): each request over its interval, on a
	// clock the records do not show, held to the hold it promised (the run's, or --hold's).
	if !endpoint {
		g.cfg.Skew, g.cfg.Hold = us(h.SkewUs), 0
		g.run = bench.StrategyRun{ServerClock: s.Clock == string(contract.ServerClock),
			MonotoneTime: s.Clock == string(contract.VirtualClock), EpochAligned: s.EpochAligned, FirstHitWindows: s.FirstHit,
			TimeQuantum: us(s.QuantumUs), AdmitAt: s.AdmitAt,
			Refusals: refusal.Rules{RefillStep: us(s.RefillStepUs), StaleUnit: us(s.StaleUnitUs), NoStaleAfter: s.NoStaleAfter, NoRelease: s.NoRelease}}
	}
	g.run.Name, g.run.RefusalsUnjudged = s.Name, s.RefusalsUnjudged
	switch {
	case endpoint:
		g.clock = contract.ServerClock
	case s.Clock != "":
		g.clock = contract.Clock(s.Clock)
	default:
		g.clock = contract.ClientClock
	}
	switch {
	case s.RefusalsUnjudged != "":
		g.why = s.RefusalsUnjudged
	case s.Shared:
		g.why = bench.RefusalsShared
	}
	return rp, nil
}

// refusalSpec is what the strategy's refusal judges are built from.
func (rp *replay) refusalSpec() refusal.Spec {
	return bench.RefusalSpec(rp.g.cfg, rp.g.run, rp.beginUs)
}

// add judges one recorded call, placed in time, decided out.
func (rp *replay) add(rec *history.Record, out outcome) {
	rp.tell(rec.StartNs)
	g := rp.g
	i := g.key(rec.Key)
	d := g.decision(rec, i, out)
	if g.refusals != nil {
		g.refusals.add(d)
	}
	if rec.ReleaseError != "" {
		g.st.ReleaseErrors++
		g.sampleError("release: " + rec.ReleaseError)
	}
	switch out {
	case refused:
		g.j.kept.add(rp.entry(i, d.ID, rec, false))
		return
	case failed, unknown:
		g.evidence.Key(i).Unjudged(d) // it may have run, and admitted
		return
	}
	if rec.Abandoned {
		g.st.Abandoned++
	}
	keep := func() { g.j.kept.add(rp.entry(i, d.ID, rec, true)) }
	if !rp.held {
		g.evidence.Key(i).Admit(d, keep)
		return
	}
	heap.Push(&rp.events, event{at: rec.EndNs, d: d, keep: keep})
	if rec.ReleaseStartNs != 0 && !rec.Abandoned {
		heap.Push(&rp.events, event{at: rec.ReleaseStartNs, d: d, release: true})
	}
}

// cut tells the judges of a call sent as the run ended whose reply was never read, or of the
// first attempt of a request sent again: no decision, but it may have run, and admitted.
func (rp *replay) cut(rec *history.Record) {
	if rec.Flags&history.NotJudged != 0 {
		if rp.g.refusals != nil {
			rp.g.refusals.stop(rp.g.j.describe(rec) + " could not be placed in time (" + rec.Flags.String() + ")")
		}
		return
	}
	rp.tell(rec.StartNs)
	i := rp.g.key(rec.Key)
	d := rp.g.decision(rec, i, unknown)
	if rp.g.refusals != nil {
		rp.g.refusals.add(d)
	}
	if !rec.FirstAttempt { // left out of the evidence by the run (its retry's own answer is told)
		rp.g.evidence.Key(i).Unjudged(d)
	}
}

// recorded adds to d what a hammer --record call told its run's evidence: the time its limiter
// was given (on a clock of the run's own), and for an admit the time it was judged at, how
// late, over which interval, and its release.
func (rp *replay) recorded(rec *history.Record, d *evidence.Decision) {
	j := rp.g.j
	d.NowUs, d.AtMs = rec.NowUs, rp.stampMs(rec)
	if !rp.g.run.ServerClock {
		d.ClockLoUs, d.ClockHiUs = rec.NowUs, max(rec.NowUs, rec.StampHiUs)
	}
	if d.Outcome != evidence.Admitted {
		return
	}
	d.Abandoned, d.LateUs = rec.Abandoned, rec.LateUs
	if rec.JudgedMs != 0 {
		d.AtMs = rec.JudgedMs
	}
	if rec.JudgedStartNs != 0 || rec.JudgedEndNs != 0 {
		d.SpanSentUs, d.SpanRepliedUs = j.since(rec.JudgedStartNs).Microseconds(), ceilMicros(j.since(rec.JudgedEndNs))
	}
	if rec.ReleaseEndNs != 0 {
		d.ReleasedUs = ceilMicros(j.since(rec.ReleaseEndNs))
		d.ReleaseOK = rec.ReleaseError == "" && !rp.g.run.Refusals.NoRelease
	}
}

// stampMs is the time a call was given, as the script could know it (ms).
func (rp *replay) stampMs(rec *history.Record) int64 {
	return overshoot.Stamp(rp.g.run.TimeQuantum, time.UnixMicro(rec.NowUs)).UnixMilli()
}

// entry is what the ring keeps of a replayed call.
func (rp *replay) entry(i int, id uint64, rec *history.Record, admit bool) entry {
	e := rp.g.entry(i, id, rec, admit)
	e.stampMs, e.lateNs = rec.JudgedMs, rec.LateUs*1000
	return e
}

// tell gives the witness every event before t (ns): no record still to come has an earlier one.
func (rp *replay) tell(t int64) {
	for len(rp.events) > 0 && rp.events[0].at < t {
		rp.tellNext()
	}
}

func (rp *replay) tellNext() {
	e := heap.Pop(&rp.events).(event)
	rp.now = time.Unix(0, e.at)
	ev := rp.g.evidence.Key(int(e.d.Key))
	if e.release {
		ev.Release(e.d.ID)
		return
	}
	ev.Admit(e.d, e.keep)
}

// finish tells the witness what is left.
func (rp *replay) finish() {
	for len(rp.events) > 0 {
		rp.tellNext()
	}
}

// event is an admit (at its reply) or a release (at its sending) the witness is told.
type event struct {
	at      int64 // ns
	d       evidence.Decision
	keep    func()
	release bool
}

// eventQueue is a min-heap of events by instant.
type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].release && !q[j].release
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
