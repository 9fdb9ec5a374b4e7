package bench

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/limiter"
)

// With Conns and a limiter whose decision is one command (limiter.NewBatch: the script
// strategies), a strategy's workers are not goroutines of their own: each connection runs its
// share of them in rounds. Every round, each of its workers that is ready sends its call, all of
// them in one pipeline, and once the replies are in each is recorded as its own decision, with
// the same evidence as a decision made alone. No goroutine per worker and no hand-off per call:
// the client's cost per decision is the command's encoding and its reply's decoding, so the
// server is the bottleneck, as under redis-benchmark -P.
//
// What a round changes, and why the evidence still holds:
//   - every call of a round is stamped sent before the pipeline is written and replied after
//     its last reply is read, on the run's one monotonic clock: each call's [sent, replied] still
//     holds the moment the server ran it, only wider, and wider intervals only widen what the
//     checkers count as possible;
//   - a round's calls share one reading of the clock for their now, taken before any is sent,
//     as the calls of workers that start together would;
//   - each acquire is traced in its worker's recorder as it would be alone (its call and the
//     reply Redis sent), its step stamped with the round's times, within its [sent, replied]
//     (limiter.Batch.Do says why that is sound);
//   - a call's latency is its round's: from the round's sending (or the call's scheduled start,
//     open loop) until the round's last reply was read, which includes the other calls' turns;
//   - a worker's hold, think time and error backoff keep it out of the rounds until they are
//     over (the others go on), and its release is recorded before the round that sends it, as
//     decide records it before sending;
//   - on a cluster a round's acquires go to the keys of one master (limiter.Batch.Groups), the
//     next round's to the next master's: which key a call goes to is the load's choice, made
//     before it is sent, and each call carries its key (keyIndex) into every checker, which
//     judge each key on the calls sent to it, whoever sent them and in whatever order, so the
//     choice changes what is judged but not how. Each key is still called as often: a
//     connection's rounds visit the groups in turn, each for as many rounds as it has keys,
//     and a worker walks each group's keys as work walks all of them. With one group (a
//     single node, anything but a cluster) a worker's keys are work's, in work's order.

// roundConns is how many connections run rounds for the strategy: 0 when its workers are
// goroutines of their own. Without Conns a limiter whose batches bypass go-redis
// (limiter.Batch.Direct: wire on a single node, rueidis on a cluster) runs one round per call
// per worker: one call in flight each, its latency one round trip, as a worker of its own has
// (rueidis pipelines the workers' rounds on its connections; limiter.Batch.OneCallARound).
// With Conns, on a cluster, each connection's rounds go to their master on a connection of
// its own to each (limiter.Config.Nodes, package wire), as on a single node.
func (s *strategyState) roundConns() int {
	b := limiter.NewBatch(s.run.Limiter)
	switch {
	case b == nil:
		return 0
	case s.cfg.Conns > 0:
		return min(s.cfg.Conns, s.cfg.Workers)
	case b.Direct():
		return s.cfg.Workers
	}
	return 0
}

// connWorkers is the workers connection conn (of conns) runs: worker w runs on w mod conns.
func connWorkers(conn, conns, workers int) []int {
	var indexes []int
	for w := conn; w < workers; w += conns {
		indexes = append(indexes, w)
	}
	return indexes
}

// worker is one of a connection's workers between rounds.
type worker struct {
	index   int   // its number among the strategy's workers
	turns   []int // its acquires so far on each group's keys (work's i, in the group)
	skew    time.Duration
	until   time.Time // out of the rounds until then: its hold, think time or backoff
	holding bool      // admitted: its release is due at until
	done    bool      // sends no more acquires (the request bound, the schedule closed)
	c       decisionCall
}

// rounds runs workers (numbered as in work) on connection conn until ctx ends, the run's
// bounds are reached or the schedule closes, then releases what they still hold.
func (s *strategyState) rounds(ctx context.Context, e *Engine, conn int, indexes []int, schedule <-chan time.Time) {
	ws := make([]worker, len(indexes))
	for i, w := range indexes {
		ws[i] = worker{index: w, turns: make([]int, len(s.groups)), skew: workerSkew(s.cfg, w)}
		ws[i].c.entered = math.MaxInt64
	}
	round := &roundBatch{slot: conn, inFlight: math.MaxInt64}
	batch := limiter.NewBatch(s.run.Limiter)
	defer batch.Close()
	if s.cfg.Conns == 0 {
		batch.OneCallARound() // a worker's own rounds (roundConns)
	}
	rctx, cancel := releaseContext(ctx, s.cfg.Horizon)
	defer cancel()
	calls := make([]limiter.Call, 0, len(ws))
	who := make([]int, 0, len(ws)) // the worker of each call
	// The connection's place among the keys (s.byPlace): its rounds' acquires go to that key's
	// group, the place moving on by one a round; the connections start spread over the keys.
	place := conn * len(s.byPlace) / max(1, s.roundConns())
	for ctx.Err() == nil {
		if e.paused.Load() && !anyHolding(ws) && !e.waitIfPaused(ctx) {
			break
		}
		calls, who = calls[:0], who[:0]
		now := time.Now()
		// No acquires while paused or in an idle spell of the load's profile (an open loop's
		// schedule has none in them); releases fall due all the same.
		hold := e.paused.Load()
		var wake time.Time
		if until, idle := idleSpell(s.cfg, now.Sub(s.begin)); idle && schedule == nil {
			hold, wake = true, s.begin.Add(until+wakeStagger(ws[0].index, until))
		}
		live := false
		for i := range ws {
			w := &ws[i]
			if w.done && !w.holding {
				continue
			}
			live = true
			if now.Before(w.until) {
				if wake.IsZero() || w.until.Before(wake) {
					wake = w.until
				}
				continue
			}
			if w.holding {
				s.releasing(&w.c)
				calls = append(calls, limiter.Call{Key: s.keys[w.c.keyIndex], Release: true, Decision: w.c.d})
				who = append(who, i)
			}
		}
		if !live {
			break
		}
		acquires := len(calls)
		gated := false
		if !hold {
			gated = s.gather(ctx, round, ws, s.byPlace[place], &calls, &who, now, wake, schedule)
			place = (place + 1) % len(s.byPlace)
		}
		if len(calls) == 0 {
			if !wake.IsZero() {
				sleepCtx(ctx, time.Until(wake))
				continue
			}
			if gated && !s.gate.wait(ctx) {
				markDone(ws) // the bound stands: release what is held and stop
			}
			if allDone(ws) {
				break
			}
			continue // paused, or the schedule's wait ended with the context: the loop's top decides
		}
		stampedAt := time.Now()
		clock := s.cfg.Now()
		round.entering(s, ws, who[acquires:])
		sentAt := time.Now() // after entering (refusal.LowWater.Enter)
		for j := acquires; j < len(calls); j++ {
			w := &ws[who[j]]
			w.c.now, w.c.stampedAt = clock.Add(w.skew), stampedAt
			calls[j].Now = w.c.now
			s.stamping(&w.c)
			w.c.sent(s, sentAt, w.c.started)
		}
		if acquires > 0 { // calls[:acquires] are releases
			batch.Do(rctx, calls)
		} else {
			batch.Do(ctx, calls)
		}
		repliedAt := time.Now()
		for j := range calls {
			w := &ws[who[j]]
			if calls[j].Release {
				s.released(&w.c, calls[j].Err)
				w.holding = false
				continue
			}
			pause, release := s.settle(ctx, &w.c, calls[j].Decision, calls[j].Err, repliedAt)
			w.until, w.holding = repliedAt.Add(pause), release
		}
		round.done(s, ws)
	}
	s.releaseAll(ctx, batch, ws)
	round.done(s, ws)
}

// roundBatch is what a connection's round hands the strategy's shared state at once, once
// the round is settled: its calls for the refusal judges (under one lock of the connection's
// log), its calls still in flight (one store of the connection's low-water slot), its counts
// (one add to each counter) and its latencies (one lock of the histogram). Per decision, these
// were a lock, two stores and several adds on cache lines the other connections' goroutines
// keep taking back.
type roundBatch struct {
	slot     int                 // the connection's log and low-water slot
	inFlight int64               // what the slot says: the earliest entered of the calls not judged
	calls    []evidence.Decision // judged this round
	counts   [4]roundCount       // the counters added to this round
	lat      []roundLatency      // this round's latencies, equal ones together
	recorded []RecordedCall      // this round's calls for the run's recording (record.go)
}

type roundCount struct {
	counter *atomic.Int64
	n       int64
}

type roundLatency struct {
	d time.Duration
	n int64
}

// entering marks the calls of ws at who in flight from now, before the time they are sent at
// is read (refusal.LowWater.Enter says why).
func (r *roundBatch) entering(s *strategyState, ws []worker, who []int) {
	if s.logs == nil || len(who) == 0 {
		return
	}
	at := s.sinceUs()
	for _, i := range who {
		ws[i].c.entered = at
	}
	if at < r.inFlight {
		r.inFlight = at
		s.inFlight.Enter(r.slot, at)
	}
}

// judged takes c for the refusal judges, and ends its call in flight.
func (r *roundBatch) judged(c *decisionCall) {
	r.calls = append(r.calls, c.judged)
	c.entered = math.MaxInt64
}

func (r *roundBatch) count(counter *atomic.Int64) {
	for i := range r.counts {
		if rc := &r.counts[i]; rc.counter == counter || rc.counter == nil {
			rc.counter = counter
			rc.n++
			return
		}
	}
	counter.Add(1) // more counters than a round keeps: at once
}

func (r *roundBatch) latency(d time.Duration) {
	if n := len(r.lat); n > 0 && r.lat[n-1].d == d {
		r.lat[n-1].n++
		return
	}
	r.lat = append(r.lat, roundLatency{d: d, n: 1})
}

// done hands the round's calls to the judges, then moves the connection's low-water slot to
// the earliest call of ws still in flight (a call is logged before its slot leaves it), and
// adds the round's counts and latencies.
func (r *roundBatch) done(s *strategyState, ws []worker) {
	if s.logs != nil {
		s.logs[r.slot].RecordAll(r.calls)
		r.calls = r.calls[:0]
		earliest := int64(math.MaxInt64)
		for i := range ws {
			earliest = min(earliest, ws[i].c.entered)
		}
		if earliest != r.inFlight {
			r.inFlight = earliest
			s.inFlight.Enter(r.slot, earliest)
		}
	}
	if len(r.recorded) > 0 {
		s.callLogs[r.slot].add(r.recorded...)
		r.recorded = r.recorded[:0]
	}
	for i := range r.counts {
		if rc := &r.counts[i]; rc.counter != nil {
			rc.counter.Add(rc.n)
			*rc = roundCount{}
		}
	}
	if len(r.lat) > 0 {
		s.histMu.Lock()
		for _, l := range r.lat {
			s.hist.RecordValues(max(histMin, min(histMax, l.d.Microseconds())), l.n) //nolint:errcheck // clamped into range
		}
		s.histMu.Unlock()
		r.lat = r.lat[:0]
	}
}

// releaseContext is the context of the rounds that carry releases: the run's, except that the
// run's end does not cancel it but ends it a horizon later, so a round begun as the run ends
// still sends its releases (releaseAll sends only what is still held) and its acquires, whose
// admits the last round releases; one context serves all of a connection's rounds.
func releaseContext(ctx context.Context, horizon time.Duration) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(horizon, cancel) })
	return rctx, func() { stop(); cancel() }
}

// gather adds the acquire of every ready worker of ws to calls, each on its next key of group
// g: each takes its turn at the request bound, and in an open loop a scheduled start, waiting
// for the first only when no call is due otherwise, and then no later than wake (a hold's end:
// a release is due). A worker's scheduled start is kept in its call's started until sent.
func (s *strategyState) gather(ctx context.Context, round *roundBatch, ws []worker, g int, calls *[]limiter.Call, who *[]int, now, wake time.Time, schedule <-chan time.Time) (gated bool) {
	keys := s.groups[g]
	for i := range ws {
		w := &ws[i]
		if w.done || w.holding || now.Before(w.until) {
			continue
		}
		var scheduled time.Time
		if schedule != nil {
			var ok bool
			if len(*calls) == 0 {
				var due <-chan time.Time
				if !wake.IsZero() {
					t := time.NewTimer(time.Until(wake))
					defer t.Stop()
					due = t.C
				}
				select {
				case scheduled, ok = <-schedule:
				case <-due:
					return false
				case <-ctx.Done():
					return false
				}
			} else {
				select {
				case scheduled, ok = <-schedule:
				default:
					return false // nothing more is due yet
				}
			}
			if !ok {
				markDone(ws)
				return false
			}
		} else if s.gate != nil {
			if ok, wait := s.gate.take(); !ok {
				if !wait {
					markDone(ws)
				}
				return wait // the engine decides whether the bound rises
			}
		}
		key := keys[(w.index+w.turns[g]*s.cfg.Workers)%len(keys)]
		w.turns[g]++
		w.c = decisionCall{worker: w.index, keyIndex: key, skew: w.skew, started: scheduled,
			round: round, entered: math.MaxInt64}
		w.c.id = s.recorders[w.index].Begin(w.c.keyIndex)
		*calls = append(*calls, limiter.Call{Key: s.keys[w.c.keyIndex], Trace: s.recorders[w.index]})
		*who = append(*who, i)
	}
	return false
}

// releaseAll releases, in one last round, what workers still hold once the load stopped: the
// hold of an admitted request ends with the run, as decide's does.
func (s *strategyState) releaseAll(ctx context.Context, batch *limiter.Batch, ws []worker) {
	var calls []limiter.Call
	var who []int
	for i := range ws {
		if w := &ws[i]; w.holding {
			s.releasing(&w.c)
			calls = append(calls, limiter.Call{Key: s.keys[w.c.keyIndex], Release: true, Decision: w.c.d})
			who = append(who, i)
			w.holding = false
		}
	}
	if len(calls) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Horizon)
	defer cancel()
	batch.Do(rctx, calls)
	for j, c := range calls {
		s.released(&ws[who[j]].c, c.Err)
	}
}

func anyHolding(ws []worker) bool {
	for i := range ws {
		if ws[i].holding {
			return true
		}
	}
	return false
}

func allDone(ws []worker) bool {
	for i := range ws {
		if !ws[i].done {
			return false
		}
	}
	return true
}

func markDone(ws []worker) {
	for i := range ws {
		ws[i].done = true
	}
}
