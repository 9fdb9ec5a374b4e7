package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/bench/overshoot"
	"github.com/limitctl/limitctl/internal/bench/refusal"
	"github.com/limitctl/limitctl/internal/bench/tally"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

// Latencies are recorded in microseconds from 1µs to 10 minutes at 3 significant figures:
// a fixed-size histogram, so memory stays flat however long the run.
const (
	histMin     = 1
	histMax     = int64(10 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

// strategyState is one strategy's workers, counters, checkers and latency histogram.
type strategyState struct {
	cfg  Config
	run  StrategyRun
	keys []string
	// groups are the indexes of keys by the master serving them (limiter.Batch.Groups), for
	// the rounds, and byPlace the group of each key in their order, groups one after another.
	groups  [][]int
	byPlace []int

	attempts, admitted, rejected, errs, retries atomic.Int64
	failOpen, failClosed, issued, releaseErrs   atomic.Int64
	unjudged                                    atomic.Int64 // admits left out of the evidence
	abandoned                                   atomic.Int64 // admits never released (Config.Abandon)
	// abandonCredit is each worker's share of an abandon so far (abandons); only its worker,
	// or the connection whose rounds run it, touches it.
	abandonCredit []float64

	// live counts running workers; finished is when the last one stopped (since begin), so a
	// strategy that got through its --requests early is not rated over the others' time.
	live     atomic.Int32
	begin    time.Time
	finished atomic.Int64

	errMu      sync.Mutex
	errKinds   map[string]int64
	errSamples []ErrorSample // the first distinct messages, in order of first sight

	histMu sync.Mutex
	hist   *hdrhistogram.Histogram

	checkers []overshoot.Checker      // one per key: the limit applies per key
	history  *overshoot.HistoryBudget // what the checkers keep to state their power

	// recorders keep each worker's latest decisions (first_overshoot.go); beginMs is the run's
	// start on the stamps' clock; firstOver is the published first overshoot, once tracing has
	// begun to build it.
	recorders []*trace.Recorder
	beginMs   int64
	tracing   atomic.Bool
	firstOver atomic.Pointer[trace.Overshoot]
	// refusedID and refused are the first false reject's request, once looked up (engine loop).
	refusedID uint64
	refused   *trace.Request
	ev        overshoot.Clock // how the client-time checkers allow for reordering
	// sentHigh holds, per key, the highest stamp (µs) sent on it so far (MonotoneTime only).
	sentHigh []atomic.Int64

	// refusals judge each key's refused decisions (nil when not judged: SharedKeys); inFlight
	// holds every worker's call in flight, so a refusal is judged only once every call that can
	// have run before it has been recorded.
	refusals []*refusal.Judge
	logs     []refusal.Log // one per worker: recording takes no lock another worker holds
	inFlight *refusal.LowWater
	masters  *masterWatch // concurrency on a target that can fail over: judged while its masters are unchanged
	nextKey  int          // the key the next tick judges first (engine loop only)

	// judgedMark tells the workers' recorders which refusals are judged (trace.HoldUnjudged).
	judgedMark trace.JudgedMark

	// tick state, touched only by the engine's loop
	lastAttempts int64
}

func newStrategyState(cfg Config, run StrategyRun) *strategyState {
	s := &strategyState{cfg: cfg, run: run, errKinds: map[string]int64{}, history: overshoot.NewHistoryBudget(historyEntries),
		hist: hdrhistogram.New(histMin, histMax, histSigFigs), ev: overshoot.ClockFor(limitsOf(cfg), run.EpochAligned)}
	if run.MonotoneTime {
		s.sentHigh = make([]atomic.Int64, cfg.KeyCount)
		for i := range s.sentHigh {
			s.sentHigh[i].Store(math.MinInt64)
		}
	}
	s.abandonCredit = make([]float64, cfg.Workers)
	for w := range s.abandonCredit {
		// Each worker starts at a phase of its own (the golden ratio's multiples mod 1 spread
		// evenly), so the workers' abandons are spread over the run, not taken together.
		s.abandonCredit[w] = math.Mod(float64(w)*0.6180339887498949, 1)
	}
	for i := 0; i < cfg.KeyCount; i++ {
		key := cfg.KeyFor(run.Name, i)
		s.keys = append(s.keys, key)
		c := s.newChecker(key)
		if r, ok := c.(overshoot.Reporter); ok {
			k := i
			r.OnFirstOver(func(m overshoot.Moment) { s.traceFirst(k, m) })
		}
		overshoot.ShareHistoryBudget(c, s.history)
		s.checkers = append(s.checkers, c)
	}
	return s
}

// historyEntries bounds what one strategy's checkers keep to state their power, about 16 bytes
// an entry (overshoot.HistoryBudget).
const historyEntries = 1 << 22

// newChecker is the checker of one key, by the limiter's evidence (limiter.Evidence).
func (s *strategyState) newChecker(key string) overshoot.Checker {
	horizon := s.cfg.Horizon.Milliseconds() + 1000
	evidence := s.cfg.Limiter.Describe().Evidence
	if evidence == limiter.HeldEvidence {
		if s.run.Witness != nil {
			return s.run.Witness(key)
		}
		w := overshoot.NewWitness(s.cfg.Limit, overshoot.WitnessStale(s.cfg.StaleAfter, s.run.TimeQuantum, s.run.Refusals.StaleUnit).Milliseconds())
		w.CountLiveFor(overshoot.WitnessLive(s.cfg.StaleAfter, s.run.Refusals.StaleUnit).Milliseconds())
		return w
	}
	// A schedule's answer is a time in itself, on the script's clock: judged as a stamp, never
	// over the call's interval.
	if !s.run.AdmitAt && s.intervalStamps() {
		return overshoot.TwoClockSliding(limitsOf(s.cfg))
	}
	if !s.run.AdmitAt && s.run.ServerClock {
		return overshoot.IntervalFor(limitsOf(s.cfg))
	}
	local := overshoot.ClientChecker(limitsOf(s.cfg), s.ev, horizon)
	if s.run.Admits != nil {
		return s.run.Admits.Checker(key, local, overshoot.ClientChecker(limitsOf(s.cfg), s.ev, 1))
	}
	if a, ok := local.(overshoot.Anchorer); ok && !s.run.AdmitAt {
		// Every call on the key is this process's, and settle notes each one that may have
		// admitted unjudged: windows can be anchored at their openers, where the contract says
		// they start there, or the power can say what that would have proven.
		if s.run.FirstHitWindows {
			a.UseAnchors()
		} else {
			a.NoteOpeners()
		}
	}
	return local
}

// caughtFrom is the strategy's power: the strongest any key's evidence states, 0 when none
// states one up to PowerSearched (overshoot.Prober).
func (s *strategyState) caughtFrom() *int64 {
	best := int64(0)
	for _, c := range s.checkers {
		if p, ok := c.(overshoot.Prober); ok {
			if k, ok := p.CaughtFrom(PowerSearched(s.cfg.Limit)); ok && (best == 0 || k < best) {
				best = k
			}
		}
	}
	return &best
}

// caughtFromFirstHit is the power windows anchored at their openers would have had, where the
// verdict did not judge by them (overshoot.AnchoredProber); nil where it is no better than the
// verdict's own, or was not measured.
func (s *strategyState) caughtFromFirstHit(verdict int64) *int64 {
	if s.run.FirstHitWindows {
		return nil
	}
	best := int64(0)
	for _, c := range s.checkers {
		if p, ok := c.(overshoot.AnchoredProber); ok {
			if k, ok := p.CaughtFromAnchored(PowerSearched(s.cfg.Limit)); ok && (best == 0 || k < best) {
				best = k
			}
		}
	}
	if best == 0 || verdict != 0 && best >= verdict {
		return nil
	}
	return &best
}

// limitsOf is what the run's overshoot checkers are built from.
func limitsOf(cfg Config) overshoot.Limits {
	return overshoot.Limits{Evidence: cfg.Limiter.Describe().Evidence, Limit: cfg.Limit, Window: cfg.Window, Rate: cfg.Rate, Skew: cfg.Skew}
}

// groupKeys groups the keys by the master serving them for the rounds (limiter.Batch.Groups),
// before the run's clock starts: on a cluster it asks the topology, a round trip.
func (s *strategyState) groupKeys(ctx context.Context) {
	var batch *limiter.Batch // nil: one group of every key
	if s.roundConns() > 0 {
		batch = limiter.NewBatch(s.run.Limiter)
	}
	s.groups = batch.Groups(ctx, s.keys, s.cfg.Now())
	s.byPlace = s.byPlace[:0]
	for g, keys := range s.groups {
		for range keys {
			s.byPlace = append(s.byPlace, g)
		}
	}
}

// start launches the workers (and, for an open loop, the scheduler that paces them).
func (s *strategyState) start(ctx context.Context, e *Engine, wg *sync.WaitGroup, begin time.Time) {
	var schedule chan time.Time
	if s.cfg.OpenRate > 0 {
		schedule = make(chan time.Time, s.cfg.Workers*4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(schedule)
			s.pace(ctx, e, schedule, begin)
		}()
	}
	s.begin = begin
	s.beginMs = s.cfg.Now().UnixMilli()
	// A log, a low-water slot and a lane of trace rings per worker, or per connection when its
	// workers run in rounds.
	conns := s.roundConns()
	s.recorders = make([]*trace.Recorder, s.cfg.Workers)
	for w := range s.recorders {
		if conns == 0 {
			s.recorders[w] = trace.NewRecorder(begin, w, s.cfg.Workers, s.cfg.NoTrace)
		}
	}
	for c := range conns {
		for _, rec := range trace.NewRecorders(begin, connWorkers(c, conns, s.cfg.Workers), s.cfg.Workers, s.cfg.NoTrace) {
			s.recorders[rec.Worker()] = rec
		}
	}
	loggers := s.cfg.Workers
	if conns > 0 {
		loggers = conns
	}
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
		spec := s.judgeSpec()
		s.inFlight = refusal.NewLowWater(loggers)
		s.logs = make([]refusal.Log, loggers)
		scratch := &refusal.Scratch{}
		for range s.keys {
			r := refusal.New(spec)
			r.ShareScratch(scratch) // judged one key after another on the engine's loop
			s.refusals = append(s.refusals, r)
		}
	}
	if conns > 0 {
		// Worker w runs on connection w mod conns (rounds.go).
		s.live.Store(int32(conns))
		for c := 0; c < conns; c++ {
			indexes := connWorkers(c, conns, s.cfg.Workers)
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.rounds(ctx, e, c, indexes, schedule)
				if s.live.Add(-1) == 0 {
					s.finished.Store(int64(time.Since(begin)))
				}
			}()
		}
		return
	}
	s.live.Store(int32(s.cfg.Workers))
	for w := 0; w < s.cfg.Workers; w++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			// The worker's calls run under a context the run's end does not cancel (it ends a
			// horizon later): a decision begun as the run ended is sent whole, so the naive
			// strategy's ZADD is never left without its PEXPIRE, as a round's calls are
			// (releaseContext). Its recorder rides on that context, built once: the limiter's
			// steps report to it, and no decision allocates for it.
			calls, cancel := releaseContext(ctx, s.cfg.Horizon)
			defer cancel()
			if !s.cfg.NoTrace {
				calls = trace.With(calls, s.recorders[worker])
			}
			s.work(ctx, calls, e, worker, schedule)
			if s.live.Add(-1) == 0 {
				s.finished.Store(int64(time.Since(begin)))
			}
		}(w)
	}
}

// pace emits the scheduled start of every request at the open-loop rate. When workers fall
// behind, the schedule does not slip: latency is measured from the scheduled start, so the
// queueing shows (no coordinated omission).
func (s *strategyState) pace(ctx context.Context, e *Engine, schedule chan<- time.Time, begin time.Time) {
	interval := time.Duration(float64(time.Second) / s.cfg.OpenRate)
	next := begin
	for n := int64(0); ; n++ {
		if s.cfg.Requests > 0 && n >= s.cfg.Requests {
			return
		}
		if e.paused.Load() {
			if !e.waitIfPaused(ctx) {
				return
			}
			next = time.Now() // a pause is not a backlog
		}
		if idleUntil, idle := idleSpell(s.cfg, next.Sub(begin)); idle {
			next = begin.Add(idleUntil) // no requests are due in an idle spell
		}
		if d := time.Until(next); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		select {
		case schedule <- next:
		case <-ctx.Done():
			return
		}
		next = next.Add(interval)
	}
}

// work is one worker's loop until the run ends (ctx); its decisions' calls go out under calls.
func (s *strategyState) work(ctx, calls context.Context, e *Engine, worker int, schedule <-chan time.Time) {
	i := worker
	for {
		if !e.waitIfPaused(ctx) {
			return
		}
		var scheduled time.Time
		if schedule != nil {
			var ok bool
			if scheduled, ok = <-schedule; !ok {
				return
			}
		} else if s.cfg.Requests > 0 && s.issued.Add(1) > s.cfg.Requests {
			return
		}
		if schedule == nil && !s.waitActive(ctx, worker) {
			return
		}
		key := i % len(s.keys)
		i += s.cfg.Workers
		s.decide(ctx, calls, worker, key, scheduled, workerSkew(s.cfg, worker))
		if ctx.Err() != nil {
			return
		}
	}
}

// judgeSpec is what the strategy's refusal judges are built from.
func (s *strategyState) judgeSpec() refusal.Spec {
	return refusal.Spec{
		Kind: s.cfg.Limiter, Limit: s.cfg.Limit, Aligned: s.run.EpochAligned, Base: s.cfg.Now().UnixMicro(),
		Window: s.cfg.Window.Microseconds(), RatePerSec: s.cfg.Rate, StaleAfter: s.cfg.StaleAfter.Microseconds(),
		Server: s.run.ServerClock, Monotone: s.run.MonotoneTime, Skew: s.cfg.Skew.Microseconds(), Horizon: s.cfg.Horizon.Microseconds(),
		Quantum: s.run.TimeQuantum, Rules: s.run.Refusals,
	}
}

// sinceUs is the run's monotonic clock in µs.
func (s *strategyState) sinceUs() int64 { return time.Since(s.begin).Microseconds() }

// decide runs one acquire under calls (and, when admitted, the hold until the run ends at the
// latest, and the release) and records it.
func (s *strategyState) decide(ctx, calls context.Context, worker, keyIndex int, scheduled time.Time, skew time.Duration) {
	stampedAt := time.Now() // before the stamp: the lateness is timed from no later than it
	c := decisionCall{worker: worker, keyIndex: keyIndex, skew: skew, now: s.cfg.Now().Add(skew), stampedAt: stampedAt}
	c.id = s.recorders[worker].Begin(keyIndex)
	s.stamping(&c)
	s.entering(worker)
	sentAt := time.Now()
	c.sent(s, sentAt, scheduled)
	d, err := s.run.Limiter.Acquire(calls, s.keys[keyIndex], c.now)
	repliedAt := time.Now()
	pause, release := s.settle(calls, &c, d, err, repliedAt)
	if pause > 0 {
		sleepCtx(ctx, pause)
	}
	if release {
		s.releasing(&c)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Horizon)
		s.released(&c, s.run.Limiter.Release(rctx, s.keys[keyIndex], c.d))
		cancel()
	}
}

// decisionCall is one decision's acquire, from its sending to its recording, and when admitted
// until its release.
type decisionCall struct {
	worker   int
	keyIndex int
	skew     time.Duration // the worker's clock offset
	now      time.Time     // the worker's clock when the call was sent (its skew included)
	started  time.Time     // latency is timed from here: the sending, or the scheduled start (open loop)
	// stampedAt is the real time read before now: how late the call reaches Redis is timed from
	// it, so a call held between its stamp and its sending (by the scheduler, or the load's
	// reordering) is as late as it is.
	stampedAt time.Time
	// sentMono and repliedMono are the run's monotonic clock (since begin) before the call was
	// sent and after its reply was read: the interval in which the server ran it.
	sentMono, repliedMono time.Duration
	d                     limiter.Decision
	// id is the request's: its trace's (the worker's Recorder.Begin), the refusal judges' and a
	// HeldChecker's.
	id     uint64
	judged refusal.Call // what the refusal judges are told of it
	// round, for a call of a connection's round, takes its counts and its record for the
	// judges with the round's others (rounds.go), and entered is when it went in flight
	// (math.MaxInt64 once judged); nil for a worker's own call.
	round   *roundBatch
	entered int64
}

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
	s.logs[c.worker].Record(c.keyIndex, c.judged)
	s.inFlight.Leave(c.worker)
}

// sent stamps the call as sent at sentAt (read after its now, and after entering), scheduled
// for scheduled (open loop) or zero.
func (c *decisionCall) sent(s *strategyState, sentAt, scheduled time.Time) {
	c.started, c.sentMono = sentAt, sentAt.Sub(s.begin)
	if !scheduled.IsZero() {
		c.started = scheduled
	}
}

// settle records an acquire answered at repliedAt (read after its reply): the decision, its
// latency and its evidence. pause is how long the worker then waits (its hold or think time,
// or its backoff after an error); release says the limiter must release c.d once it has (and
// the call is judged once the release is answered, by released).
func (s *strategyState) settle(ctx context.Context, c *decisionCall, d limiter.Decision, err error, repliedAt time.Time) (pause time.Duration, release bool) {
	check := s.checkers[c.keyIndex]
	c.repliedMono = repliedAt.Sub(s.begin)
	latency := repliedAt.Sub(c.started)
	c.judged = refusal.Call{ID: c.id, Sent: c.sentMono.Microseconds(), Replied: ceilMicros(c.repliedMono), Outcome: refusal.Unknown}
	ahead := repliedAt.Sub(c.stampedAt) + s.cfg.Skew - c.skew
	if s.run.ServerClock {
		c.judged.StampLo, c.judged.StampHi = c.judged.Sent, c.judged.Replied
	} else {
		c.judged.StampLo = c.now.UnixMicro()
		c.judged.StampHi = c.judged.StampLo
		if s.sentHigh != nil {
			// Read after the reply: the script's TIME lies in [stamp, this] (overshoot/clock_evidence.go).
			c.judged.StampHi = max(c.judged.StampLo, s.sentHigh[c.keyIndex].Load())
			ahead = max(ahead, time.Duration(c.judged.StampHi-c.judged.StampLo)*time.Microsecond)
		}
	}
	// The longest the request can have taken to reach Redis after its now (in ms, as sent), by
	// the most advanced worker clock (up to Skew ahead of this one's), by which another call may
	// already have pruned the log or started the window's counter; on a monotone virtual clock,
	// also how far past its stamp its TIME can have been answered.
	stamp := overshoot.Stamp(s.run.TimeQuantum, c.now)
	lateness := overshoot.Lateness(s.run.TimeQuantum, c.now, ahead)
	if err != nil && ctx.Err() != nil {
		s.judged(c) // not a decision, but it may have run: later refusals count it
		noteUnjudged(check, stamp, -1)
		return 0, false
	}
	s.count(c, &s.attempts)
	if c.round != nil {
		c.round.latency(latency)
	} else {
		s.record(latency)
	}
	if err != nil {
		s.count(c, &s.errs)
		s.countError(classifyDecision(err, limiter.Strategy(s.run.Name)), err.Error())
		s.judged(c)
		noteUnjudged(check, stamp, -1) // it may have run, and admitted
		if s.cfg.FailOpen {
			s.failOpen.Add(1)
			pause = s.cfg.Hold
		} else {
			s.failClosed.Add(1)
		}
		return pause + s.cfg.ErrorBackoff, false
	}
	if d.Retries > 0 {
		s.retries.Add(int64(d.Retries))
	}
	if !d.Allowed {
		s.count(c, &s.rejected)
		s.recorders[c.worker].Keep(false, stamp.UnixMilli(), c.judged.Sent, c.judged.Replied, lateness)
		c.judged.Outcome = refusal.Refused
		s.judged(c)
		return 0, false
	}
	s.count(c, &s.admitted)
	c.judged.Outcome = refusal.Admitted
	releases := s.cfg.Limiter.Describe().Releases
	if !releases {
		s.judged(c)
	}
	var wait time.Duration
	if s.run.AdmitAt && !d.AdmitAt.IsZero() {
		stamp, lateness, wait = admitAtEvidence(c.now, d.AdmitAt, lateness)
	}
	if ic, ok := check.(overshoot.IntervalAdmitter); ok && !s.run.AdmitAt {
		// The script read the server's clock: judged by when the call was sent and answered.
		// Kept only when judged, so the trace shows exactly the admits the evidence counted. An
		// admit's own judging settles only intervals a lag behind the newest reply, so it is in
		// them only when it was recorded that late; the trace then counts it as missing.
		lo, hi := c.sentMono, c.repliedMono
		if s.intervalStamps() {
			// The virtual clock's TIME lies in [stamp, highest stamp sent before the reply], and
			// the call ran in [sent, replied] of the real clock the key's TTLs run on: judged
			// over both (overshoot/clock_evidence.go).
			lo, hi = min(lo, s.sinceBegin(c.judged.StampLo)), max(hi, s.sinceBegin(c.judged.StampHi))
		}
		if ic.AdmitInterval(lo, hi) {
			s.recorders[c.worker].Keep(true, stamp.UnixMilli(), c.judged.Sent, c.judged.Replied, lateness)
		}
		return s.cfg.Hold, false
	}
	if s.windowed() && lateness >= s.cfg.Window || s.ev.LateMs > 0 && lateness > time.Duration(s.ev.LateMs)*time.Millisecond ||
		s.straddles(c) {
		// The window scripts are exact for a request that reaches Redis within one window of its
		// now (the log keeps two windows, a counter lives two); a later one may rightly see an
		// emptier window, so it is no evidence either way. The bucket's and the unaligned fixed
		// window's evidence allow for a bounded lateness (overshoot/clock_evidence.go).
		s.unjudged.Add(1)
		noteUnjudged(check, stamp, lateness)
		return wait, false
	}
	// Kept before the checker sees it, so the checker's first overshoot finds it in the ring.
	s.recorders[c.worker].Keep(true, stamp.UnixMilli(), c.judged.Sent, c.judged.Replied, lateness)
	c.d = d
	if held, ok := check.(overshoot.HeldChecker); ok {
		// Recorded as of the most advanced worker clock (up to Skew ahead of this one): a call
		// decided by it may already have reclaimed a held request as abandoned.
		held.AdmitHeld(c.id, c.now.UnixMilli(), s.cfg.Now().Add(s.cfg.Skew).UnixMilli())
	} else if la, ok := check.(overshoot.LateAdmitter); ok {
		la.AdmitLate(stamp.UnixMilli(), lateness)
	} else {
		check.Admit(stamp.UnixMilli())
	}
	if releases && s.abandons(c.worker) {
		// Never released, as by a client that crashed: held until stale-after reclaims it,
		// for the witness and the refusal judges alike. The worker goes on after its hold.
		s.abandoned.Add(1)
		if held, ok := check.(overshoot.HeldChecker); ok {
			held.AbandonHeld(c.id)
		}
		c.judged.Abandoned = true
		s.judged(c)
		return wait + s.cfg.Hold, false
	}
	return wait + s.cfg.Hold, releases
}

// noteUnjudged tells a checker that anchors windows at their openers (overshoot.Anchorer) of a
// call that may have admitted, stamped at stamp and at most late late (negative: unknown), which
// it does not judge.
func noteUnjudged(check overshoot.Checker, stamp time.Time, late time.Duration) {
	if a, ok := check.(overshoot.Anchorer); ok {
		lateMs := int64(-1)
		if late >= 0 {
			lateMs = (late + time.Millisecond - 1).Milliseconds()
		}
		a.NoteUnjudged(stamp.UnixMilli(), lateMs)
	}
}

// admitAtEvidence is how an admit the limiter scheduled for at (a call stamped now, as late as
// lateness allows) is judged, and how long its caller waits for it.
//
// The stamp is at, to the millisecond below: the limiter's own promise, which a correct
// schedule keeps within the window or bucket it enforces. Rounding down is sound for the
// windows: two stamps less than a window apart once floored (at most window-1 ms) were less than
// a window apart before; a fixed window's index is the same for at and its floor. For the
// bucket, the lateness carries what the floor took off (under 1ms) and, for a time before
// the call's own now, how far before: a schedule that answers the past decided it with a view
// as late as the call's, so the bucket's lateness tiers allow for a refill over that span, as
// they do for a late call. A time after now needs nothing more than the call's lateness. The
// windows' rule (a call a window or more late is no evidence) reads the same lateness.
func admitAtEvidence(now, at time.Time, lateness time.Duration) (stamp time.Time, late, wait time.Duration) {
	stamp = time.UnixMilli(tally.FloorDiv(at.UnixMicro(), 1000))
	late = lateness + at.Sub(stamp)
	if at.Before(now) {
		late += now.Sub(at)
	}
	wait = min(max(0, at.Sub(now)), MaxAdmitWait)
	return stamp, late, wait
}

// stamping records c's stamp as sent on its key, before the call is sent, so a reply read later
// finds it counted (MonotoneTime; a no-op otherwise).
func (s *strategyState) stamping(c *decisionCall) {
	if s.sentHigh == nil {
		return
	}
	us, high := c.now.UnixMicro(), &s.sentHigh[c.keyIndex]
	for old := high.Load(); us > old && !high.CompareAndSwap(old, us); old = high.Load() {
	}
}

// intervalStamps reports whether the admits are judged as intervals of the stamps' clock and
// the real one: a sliding window on a monotone virtual clock (overshoot/clock_evidence.go).
func (s *strategyState) intervalStamps() bool {
	return s.run.MonotoneTime && !s.run.ServerClock && s.cfg.Limiter.Describe().Evidence == limiter.SlidingWindowEvidence
}

// sinceBegin is a stamp (µs) as a time since the run's start on the stamps' clock.
func (s *strategyState) sinceBegin(stampUs int64) time.Duration {
	return time.Duration(stampUs-s.beginMs*1000) * time.Microsecond
}

// straddles reports whether c, judged by epoch-aligned fixed windows on a monotone virtual
// clock, may have been answered a TIME in a later window than its stamp's: its window is then
// unknown, and it is no evidence (overshoot/clock_evidence.go).
func (s *strategyState) straddles(c *decisionCall) bool {
	if !s.run.MonotoneTime || !s.ev.Aligned || s.cfg.Limiter.Describe().Evidence != limiter.FixedWindowEvidence {
		return false
	}
	w := max(1, s.cfg.Window.Milliseconds())
	lo := overshoot.Stamp(s.run.TimeQuantum, c.now).UnixMilli()
	hi := overshoot.Stamp(s.run.TimeQuantum, time.UnixMicro(c.judged.StampHi)).UnixMilli()
	return tally.FloorDiv(lo, w) != tally.FloorDiv(hi, w)
}

// abandons reports whether worker abandons the request it was just admitted: each worker
// abandons Config.Abandon of its admits, one whenever its credit of Abandon per admit makes a
// whole one, so they are evenly spaced and the share is exact over any run.
func (s *strategyState) abandons(worker int) bool {
	if s.cfg.Abandon <= 0 || s.run.NoAbandon {
		return false
	}
	credit := &s.abandonCredit[worker]
	if *credit += s.cfg.Abandon; *credit < 1 {
		return false
	}
	*credit--
	return true
}

// releasing records that c's request no longer holds its slot: before its release is sent, so
// the witness never over-counts.
func (s *strategyState) releasing(c *decisionCall) {
	check := s.checkers[c.keyIndex]
	if held, ok := check.(overshoot.HeldChecker); ok {
		held.ReleaseHeld(c.id)
	} else {
		check.Release()
	}
}

// released counts c's release's outcome, and hands c to the refusal judges: a request counts
// as held until its release was answered.
func (s *strategyState) released(c *decisionCall, err error) {
	if err != nil {
		s.releaseErrs.Add(1) // not a decision: counted apart from errors and their kinds
		s.sampleError("release: " + err.Error())
	} else {
		c.judged.ReleaseOK = !s.run.Refusals.NoRelease // released by expiry: held until stale-after
	}
	c.judged.Released = ceilMicros(time.Since(s.begin))
	s.judged(c)
}

// allowances name what widens the strategy's evidence, for saying why admits went unjudged:
// the workers' skew, the server's clock, the lateness the evidence allows for.
func (s *strategyState) allowances() string {
	var parts []string
	if s.cfg.Skew > 0 {
		parts = append(parts, "skew ±"+human.Latency(s.cfg.Skew))
	}
	switch {
	case s.run.ServerClock:
		parts = append(parts, "the server's clock (each admit judged over its call's interval)")
	case s.ev.LateMs > 0:
		parts = append(parts, fmt.Sprintf("a lateness bound of %dms", s.ev.LateMs))
	case s.windowed():
		parts = append(parts, "calls answered a window or more after their time")
	}
	return strings.Join(parts, " and ")
}

// windowed reports whether the limiter judges admits per window of their now.
func (s *strategyState) windowed() bool { return s.cfg.Limiter.Describe().Evidence.Windowed() }

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// count adds one of c's counts: to counter, or with the rest of its round's.
func (s *strategyState) count(c *decisionCall, counter *atomic.Int64) {
	if c.round != nil {
		c.round.count(counter)
		return
	}
	counter.Add(1)
}

func (s *strategyState) record(latency time.Duration) {
	us := max(histMin, min(histMax, latency.Microseconds()))
	s.histMu.Lock()
	s.hist.RecordValue(us) //nolint:errcheck // clamped into range above
	s.histMu.Unlock()
}

func (s *strategyState) countError(kind, msg string) {
	s.errMu.Lock()
	s.errKinds[kind]++
	s.errMu.Unlock()
	s.sampleError(msg)
}

// sampleError counts msg among the first distinct messages; later new ones are only counted
// by kind, so memory stays bounded whatever the server says.
func (s *strategyState) sampleError(msg string) {
	msg = trimMessage(msg)
	s.errMu.Lock()
	defer s.errMu.Unlock()
	for i := range s.errSamples {
		if s.errSamples[i].Message == msg {
			s.errSamples[i].Count++
			return
		}
	}
	if len(s.errSamples) < MaxErrorSamples {
		s.errSamples = append(s.errSamples, ErrorSample{Message: msg, Count: 1})
	}
}

// trimMessage keeps an error message to one line of at most MaxErrorMessage bytes.
func trimMessage(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexAny(msg, "\r\n"); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	if len(msg) > MaxErrorMessage {
		cut := MaxErrorMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}

// view is the strategy's snapshot; sinceTick is the time since the previous snapshot.
func (s *strategyState) view(sinceTick, active time.Duration, final bool) StrategySnapshot {
	attempts := s.attempts.Load()
	v := StrategySnapshot{
		Name: s.run.Name, Attempts: attempts, Admitted: s.admitted.Load(), Rejected: s.rejected.Load(),
		Errors: s.errs.Load(), Retries: s.retries.Load(),
		FailOpenAdmits: s.failOpen.Load(), FailClosedRejects: s.failClosed.Load(),
		ReleaseErrors: s.releaseErrs.Load(), Unjudged: s.unjudged.Load(), Abandoned: s.abandoned.Load(),
	}
	s.errMu.Lock()
	v.ErrorsByKind = make(map[string]int64, len(s.errKinds))
	for k, n := range s.errKinds {
		v.ErrorsByKind[k] = n
	}
	v.ErrorSamples = append([]ErrorSample(nil), s.errSamples...)
	s.errMu.Unlock()
	for _, c := range s.checkers {
		var r overshoot.CheckResult
		if final {
			r = c.Finish()
		} else {
			r = c.Result()
		}
		v.Peak = max(v.Peak, r.Peak)
		v.Overshoot = max(v.Overshoot, r.Overshoot)
		v.OvershootEvent += r.OvershootEvent
		v.Current = max(v.Current, r.Current)
		v.Unjudged += r.Unjudged
		if tp, ok := c.(interface{ TakeTickPeak() int64 }); ok && !final {
			v.TickPeak = max(v.TickPeak, tp.TakeTickPeak())
		}
	}
	if final {
		v.CaughtFrom = s.caughtFrom()
		v.CaughtFromFirstHit = s.caughtFromFirstHit(*v.CaughtFrom)
	}
	v.FirstOvershoot = s.firstOver.Load()
	v.Allowances = s.allowances()
	s.judgeRefusals(final, &v)
	v.Contended = v.Rejected > 0 || v.Peak >= s.cfg.Limit
	if sinceTick > 0 && !final {
		v.Throughput = float64(attempts-s.lastAttempts) / sinceTick.Seconds()
	}
	if f := time.Duration(s.finished.Load()); f > 0 && f < active {
		active = f // done before the run: rate it over its own time
	}
	if active > 0 {
		v.AvgThroughput = float64(attempts) / active.Seconds()
	}
	if final {
		v.Throughput = v.AvgThroughput
	}
	s.lastAttempts = attempts
	s.histMu.Lock()
	if final {
		v.Histogram = s.hist.Export()
	}
	if s.hist.TotalCount() > 0 {
		v.Latency = Latency{
			P50: us(s.hist.ValueAtQuantile(50)), P90: us(s.hist.ValueAtQuantile(90)),
			P99: us(s.hist.ValueAtQuantile(99)), P999: us(s.hist.ValueAtQuantile(99.9)), Max: us(s.hist.Max()),
		}
	}
	s.histMu.Unlock()
	return v
}

func us(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// judgeRefusals judges every key's refusals decided before the low-water mark (all of them at
// the end) and adds what they found to v.
func (s *strategyState) judgeRefusals(final bool, v *StrategySnapshot) {
	if s.refusals == nil {
		s.passCalls(final)
		v.RefusalsUnjudged, v.NoRefusalJudged = RefusalsShared, true
		if s.run.RefusalsUnjudged != "" {
			v.RefusalsUnjudged = s.run.RefusalsUnjudged
		}
		return
	}
	s.judgePass(final)
	if s.masters != nil {
		v.RefusalsUnjudged = s.masters.reason()
		v.NoRefusalJudged = v.RefusalsUnjudged != "" && s.masters.confirmed.Load() == 0
	}
	for _, r := range s.refusals {
		v.FalseRejects += r.Count
		if r.First != nil && (v.FirstFalseReject == nil || r.First.SentMs < v.FirstFalseReject.SentMs) {
			v.FirstFalseReject = r.First
		}
		if r.Worst != nil && (v.Tightest == nil || r.Worst.Room() < v.Tightest.Room()) {
			v.Tightest = r.Worst
		}
	}
	if v.FirstFalseReject != nil {
		first, tightest := *v.FirstFalseReject, *v.Tightest
		first.Request = s.refusedRequest(first.ID)
		v.FirstFalseReject, v.Tightest = &first, &tightest // copies: the snapshot is read elsewhere
	}
}

// judgePass judges every key's refusals decided before the low-water mark (all of them when
// final), tells the workers' recorders which refusals are judged, and looks up the first false
// reject's request while its worker's ring still holds it. The engine runs it every judging
// tick (judgeEvery) and at each snapshot, on its loop.
func (s *strategyState) judgePass(final bool) {
	if s.refusals == nil {
		s.passCalls(final)
		return
	}
	mark := int64(refusal.Forever)
	if !final {
		mark = s.inFlight.Mark(s.sinceUs())
	}
	// Every call sent before the mark is in a worker's log by now: hand them to their keys.
	for i := range s.logs {
		s.logs[i].DrainTo(s.refusals)
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
	judge := min(len(s.refusals), keysJudgedPerTick)
	if final || stopped {
		judge = len(s.refusals)
	}
	for n := 0; n < judge; n++ {
		r := s.refusals[s.nextKey]
		s.nextKey = (s.nextKey + 1) % len(s.refusals)
		r.JudgeBefore(mark)
		if stopped {
			r.Close() // the masters changed: nothing later will be judged, so nothing is kept
		}
	}
	judged := int64(refusal.Forever)
	var first *refusal.FalseReject
	for _, r := range s.refusals {
		judged = min(judged, r.UnjudgedFrom(mark))
		if r.First != nil && (first == nil || r.First.SentMs < first.SentMs) {
			first = r.First
		}
	}
	if first != nil {
		s.refusedRequest(first.ID) // found now, before the ring moves on; kept by id
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
// refusals, looked up once per id (engine loop only); nil when the ring had moved on.
func (s *strategyState) refusedRequest(id uint64) *trace.Request {
	if id == s.refusedID {
		return s.refused
	}
	s.refusedID, s.refused = id, nil
	if id == 0 || len(s.recorders) == 0 {
		return nil
	}
	worker := int((id - 1) % uint64(len(s.recorders)))
	recs := s.recorders[worker].Refused(nil, func(r *trace.Record) bool { return r.ID == id })
	if reqs, _ := trace.Requests(recs); len(reqs) == 1 {
		s.refused = &reqs[0]
	}
	return s.refused
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

// ceilMicros is d in µs, rounded up: a reply is never taken for earlier than it came.
func ceilMicros(d time.Duration) int64 { return int64((d + time.Microsecond - 1) / time.Microsecond) }

// round3 keeps three decimals for display values.
func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
