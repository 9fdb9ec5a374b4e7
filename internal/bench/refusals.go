package bench

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/trace"
)

// judgeSpec is what the strategy's refusal judges are built from, the run starting now.
func (s *strategyState) judgeSpec() refusal.Spec {
	return RefusalSpec(s.cfg, s.run, s.cfg.Now().UnixMicro())
}

// startRefusals sets up the refusal judges (or, in a run whose keys other processes share,
// the sink of the calls judged elsewhere) with loggers logs: one per worker, or per connection
// whose workers run in rounds.
func (s *strategyState) startRefusals(begin time.Time, loggers int) {
	if s.cfg.SharedKeys && s.run.RefusalsUnjudged == "" && s.run.Calls != nil {
		// Judged elsewhere, over every process's calls: this process only logs its own.
		s.inFlight = refusal.NewLowWater(loggers)
		s.logs = make([]refusal.Log, loggers)
		s.run.Calls.Start(begin, s.judgeSpec())
	}
	if !s.cfg.SharedKeys && s.run.RefusalsUnjudged == "" {
		for _, rec := range s.recorders {
			rec.HoldUnjudged(&s.judgedMark) // the first false reject's request stays in its ring until judged
		}
		s.inFlight = refusal.NewLowWater(loggers)
		s.logs = make([]refusal.Log, loggers)
		s.evidence.JudgeRefusals(s.judgeSpec(), s.refusedRequest)
	}
}

// sinceUs is the run's monotonic clock in µs.
func (s *strategyState) sinceUs() int64 { return time.Since(s.begin).Microseconds() }

// entering marks worker's call in flight for the refusal judges, before the time it is sent at
// is read (refusal.LowWater.Enter says why).
func (s *strategyState) entering(worker int) {
	if s.logs != nil {
		s.inFlight.Enter(worker, s.sinceUs())
	}
}

// judged hands c to the refusal judges and ends its worker's call in flight.
func (s *strategyState) judged(c *decisionCall) {
	if s.logs == nil {
		return
	}
	if c.round != nil {
		c.round.judged(c)
		return
	}
	s.logs[c.worker].Record(c.judged)
	s.inFlight.Leave(c.worker)
}

// refusalsUnjudged says why the strategy's refusals are not judged, or those from some moment
// on (its masters changed).
func (s *strategyState) refusalsUnjudged(r *fold.Refusals) {
	switch {
	case !s.evidence.JudgesRefusals():
		r.RefusalsUnjudged, r.NoRefusalJudged = RefusalsShared, true
		if s.run.RefusalsUnjudged != "" {
			r.RefusalsUnjudged = s.run.RefusalsUnjudged
		}
	case s.masters != nil:
		r.RefusalsUnjudged = s.masters.reason()
		r.NoRefusalJudged = r.RefusalsUnjudged != "" && s.masters.confirmed.Load() == 0
	}
}

// judgePass judges every key's refusals decided before the low-water mark (all of them when
// final), tells the workers' recorders which refusals are judged, and has the first false
// reject's request looked up while its worker's ring still holds it. The engine runs it every
// judging tick (judgeEvery) and at each snapshot, on its loop.
func (s *strategyState) judgePass(final bool) {
	if !s.evidence.JudgesRefusals() {
		s.passCalls(final)
		return
	}
	mark := int64(refusal.Forever)
	if !final {
		mark = s.inFlight.Mark(s.sinceUs())
	}
	// Every call sent before the mark is in a worker's log by now: hand them to their keys.
	for i := range s.logs {
		s.logs[i].DrainTo(s.evidence.Judges())
	}
	stopped := false
	if s.masters != nil {
		confirmed := s.masters.confirmed.Load()
		mark = min(mark, confirmed)
		// The masters changed and everything up to the last confirmation is in: this is the
		// last batch that can judge anything.
		stopped = s.masters.reason() != "" && mark == confirmed
	}
	// With many keys each pass judges some of them in turn, so a key's batch holds more calls:
	// what a batch costs beyond its calls (sorting what the key keeps, settling it) is paid
	// once per key every few passes, not every pass.
	judge := keysJudgedPerTick
	if final || stopped {
		judge = 0 // every key
	}
	judged := s.evidence.JudgeBefore(mark, judge)
	if stopped {
		s.evidence.CloseRefusals() // the masters changed: nothing later will be judged, so nothing is kept
		judged = refusal.Forever
	}
	s.judgedMark.Set(judged)
}

// passCalls hands every logged call to the strategy's CallSink with the low-water mark they
// are complete to (all of them when final), on the engine's loop.
func (s *strategyState) passCalls(final bool) {
	if s.logs == nil {
		return
	}
	mark := int64(refusal.Forever)
	if !final {
		mark = s.inFlight.Mark(s.sinceUs())
	}
	for i := range s.logs {
		s.logs[i].Drain(s.run.Calls.Add)
	}
	s.run.Calls.Mark(mark)
}

// refusedRequest is the refused request id with its commands, from its worker's ring of
// refusals (engine loop only); nil when the ring had moved on.
func (s *strategyState) refusedRequest(id uint64) *trace.Request {
	if len(s.recorders) == 0 {
		return nil
	}
	worker := int((id - 1) % uint64(len(s.recorders)))
	recs := s.recorders[worker].Refused(nil, func(r *trace.Record) bool { return r.ID == id })
	if reqs, _ := trace.Requests(recs); len(reqs) == 1 {
		return &reqs[0]
	}
	return nil
}

// judgeEvery is how often the engine judges refusals between snapshots: a refusal proven wrong
// is found within a few of these of its reply, while its worker's ring still holds its request
// (a ring holds RefuseRing refusals not yet judged: a worker would have to be refused that
// many times before its key's turn to be judged for the first false reject's request to be
// lost; with more than keysJudgedPerTick keys a key's turn comes every few passes).
const judgeEvery = 10 * time.Millisecond

// keysJudgedPerTick bounds the keys whose refusals one judging pass judges.
const keysJudgedPerTick = 256

// RefusalsShared is why a run with a run id does not judge refusals; a strategy's
// RefusalsUnjudged says it, or why its refusals from some moment on were not judged.
const RefusalsShared = "other processes may share the run's keys (--run-id), so what they hold or admit is unknown here"
