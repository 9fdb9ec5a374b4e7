package bench

import (
	"context"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/limiter"
)

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
		} else if s.gate != nil {
			if ok, wait := s.gate.take(); !ok {
				if !wait || !s.gate.wait(ctx) {
					return
				}
				continue
			}
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
		if s.run.Endpoint {
			// The endpoint released the slot before it answered: held no later than its reply.
			c.judged.ReleasedUs, c.judged.ReleaseOK = c.judged.RepliedUs, true
			c.releaseSentUs = c.judged.RepliedUs
			s.judged(&c)
			s.logCall(&c)
			return
		}
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
	// id is the request's: its trace's (the worker's Recorder.Begin), the refusal judges' and the
	// held evidence's (overshoot.Call).
	id     uint64
	judged evidence.Decision // what the evidence is told of it
	// What a recorded run (record.go) keeps of it beyond judged: its release's sending, why it
	// failed, and whether it was cut off at the run's end.
	releaseSentUs   int64
	errKind, errMsg string
	releaseErr      string
	cut             bool
	// round, for a call of a connection's round, takes its counts and its record for the
	// judges with the round's others (rounds.go), and entered is when it went in flight
	// (math.MaxInt64 once judged); nil for a worker's own call.
	round   *roundBatch
	entered int64
}

// sent stamps the call as sent at sentAt (read after its now, and after entering), scheduled
// for scheduled (open loop) or zero.
func (c *decisionCall) sent(s *strategyState, sentAt, scheduled time.Time) {
	c.started, c.sentMono = sentAt, sentAt.Sub(s.begin)
	if !scheduled.IsZero() {
		c.started = scheduled
	}
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

// abandons reports whether worker abandons the request it was just admitted: each worker
// abandons Config.Abandon of its admits, one whenever its credit of Abandon per admit makes a
// whole one, so they are evenly spaced and the share is exact over any run.
func (s *strategyState) abandons(worker int) bool {
	if s.run.NoAbandon {
		return false
	}
	if s.cfg.Crashes.Every > 0 {
		return s.crashed()
	}
	if s.cfg.Abandon <= 0 {
		return false
	}
	credit := &s.abandonCredit[worker]
	if *credit += s.cfg.Abandon; *credit < 1 {
		return false
	}
	*credit--
	return true
}

// crashed reports whether the request just admitted is one a crashed client holds: when a crash
// is due (Config.Crashes), the next Size admits, whichever workers made them, are never released,
// taken together as a process that dies holding its slots. A limiter that never reclaims is then
// left with that many slots stale at once, and its refusals with few live requests beside them:
// proven too strict once stale-after has passed, on a clock of whole seconds as on milliseconds.
func (s *strategyState) crashed() bool {
	since := int64(time.Since(s.begin))
	for next := s.nextCrash.Load(); since >= next; next = s.nextCrash.Load() {
		if s.nextCrash.CompareAndSwap(next, next+int64(s.cfg.Crashes.Every)) {
			s.crashLeft.Add(s.cfg.Crashes.Size)
		}
	}
	if last := s.lastCrash.Load(); last > 0 && since >= last && s.lastCrash.CompareAndSwap(last, 0) {
		s.crashLeft.Add(s.cfg.Crashes.Size)
	}
	for left := s.crashLeft.Load(); left > 0; left = s.crashLeft.Load() {
		if s.crashLeft.CompareAndSwap(left, left-1) {
			return true
		}
	}
	return false
}

// releasing records that c's request no longer holds its slot: before its release is sent, so
// the witness never over-counts.
func (s *strategyState) releasing(c *decisionCall) {
	s.evidence.Key(c.keyIndex).Release(c.id)
	if s.callLogs != nil {
		c.releaseSentUs = s.sinceUs() // read before the release is sent
	}
}

// released counts c's release's outcome, and hands c to the refusal judges: a request counts
// as held until its release was answered.
func (s *strategyState) released(c *decisionCall, err error) {
	if err != nil {
		s.releaseErrs.Add(1) // not a decision: counted apart from errors and their kinds
		c.releaseErr = err.Error()
		s.sampleError("release: " + c.releaseErr)
	} else {
		c.judged.ReleaseOK = !s.run.Refusals.NoRelease // released by expiry: held until stale-after
	}
	c.judged.ReleasedUs = ceilMicros(time.Since(s.begin))
	s.judged(c)
	s.logCall(c)
}
