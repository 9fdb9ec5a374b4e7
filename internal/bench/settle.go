package bench

import (
	"context"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/tally"
	"github.com/limitctl/limitctl/internal/limiter"
)

// settle records an acquire answered at repliedAt (read after its reply): the decision, its
// latency and its evidence. pause is how long the worker then waits (its hold or think time,
// or its backoff after an error); release says the limiter must release c.d once it has (and
// the call is judged once the release is answered, by released).
func (s *strategyState) settle(ctx context.Context, c *decisionCall, d limiter.Decision, err error, repliedAt time.Time) (pause time.Duration, release bool) {
	ev := s.evidence.Key(c.keyIndex)
	c.repliedMono = repliedAt.Sub(s.begin)
	latency := repliedAt.Sub(c.started)
	if !d.Sent.IsZero() {
		// The limiter measured its own instants (an endpoint): tighter than the engine's.
		c.sentMono = d.Sent.Sub(s.begin)
	}
	if !d.Replied.IsZero() {
		c.repliedMono = d.Replied.Sub(s.begin)
	}
	c.judged = evidence.Decision{ID: c.id, Key: int32(c.keyIndex), SentUs: c.sentMono.Microseconds(), RepliedUs: ceilMicros(c.repliedMono),
		Outcome: evidence.Unknown, NowUs: c.now.UnixMicro(), LateUs: -1}
	c.d = d
	ahead := repliedAt.Sub(c.stampedAt) + s.cfg.Skew - c.skew
	if s.run.ServerClock {
		c.judged.ClockLoUs, c.judged.ClockHiUs = c.judged.SentUs, c.judged.RepliedUs
	} else {
		c.judged.ClockLoUs = c.judged.NowUs
		c.judged.ClockHiUs = c.judged.ClockLoUs
		if s.sentHigh != nil {
			// Read after the reply: the script's TIME lies in [stamp, this] (overshoot/clock_evidence.go).
			c.judged.ClockHiUs = max(c.judged.ClockLoUs, s.sentHigh[c.keyIndex].Load())
			ahead = max(ahead, time.Duration(c.judged.ClockHiUs-c.judged.ClockLoUs)*time.Microsecond)
		}
	}
	// The longest the request can have taken to reach Redis after its now (in ms, as sent), by
	// the most advanced worker clock (up to Skew ahead of this one's), by which another call may
	// already have pruned the log or started the window's counter; on a monotone virtual clock,
	// also how far past its stamp its TIME can have been answered.
	stamp := overshoot.Stamp(s.run.TimeQuantum, c.now)
	lateness := overshoot.Lateness(s.run.TimeQuantum, c.now, ahead)
	c.judged.AtMs = stamp.UnixMilli()
	if err != nil && ctx.Err() != nil {
		s.judged(c) // not a decision, but it may have run: later refusals count it
		ev.Unjudged(c.judged)
		c.cut = true
		s.logCall(c)
		return 0, false
	}
	s.count(c, &s.attempts)
	if s.statuses != nil {
		s.statuses.add(d.Status)
		if d.Retried {
			s.retriedFirst(c)
		}
	}
	if c.round != nil {
		c.round.latency(latency)
	} else {
		s.record(latency)
	}
	if err != nil {
		s.count(c, &s.errs)
		c.errKind, c.errMsg = classifyDecision(err, limiter.Strategy(s.run.Name)), err.Error()
		s.countError(c.errKind, c.errMsg)
		s.judged(c)
		s.logCall(c)
		ev.Unjudged(c.judged) // it may have run, and admitted
		if s.cfg.FailOpen {
			s.failOpen.Add(1)
			pause = s.cfg.Hold // 0 for an endpoint, which holds its own
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
		s.recorders[c.worker].Keep(false, stamp.UnixMilli(), c.judged.SentUs, c.judged.RepliedUs, lateness)
		c.judged.Outcome = evidence.Refused
		s.judged(c)
		s.logCall(c)
		return 0, false
	}
	s.count(c, &s.admitted)
	c.judged.Outcome = evidence.Admitted
	releases := s.cfg.Limiter.Describe().Releases
	if !releases {
		s.judged(c)
	}
	var wait time.Duration
	if s.run.AdmitAt && !d.AdmitAt.IsZero() {
		stamp, lateness, wait = admitAtEvidence(c.now, d.AdmitAt, lateness)
	}
	c.judged.AtMs, c.judged.LateUs = stamp.UnixMilli(), ceilMicros(lateness)
	if s.sentHigh != nil && s.intervalStamps() {
		// The virtual clock's TIME lies in [stamp, highest stamp sent before the reply], and the
		// call ran in [sent, replied] of the real clock the key's TTLs run on: judged over both
		// (overshoot/clock_evidence.go).
		c.judged.SpanSentUs = min(c.judged.SentUs, s.sinceBegin(c.judged.ClockLoUs).Microseconds())
		c.judged.SpanRepliedUs = max(c.judged.RepliedUs, ceilMicros(s.sinceBegin(c.judged.ClockHiUs)))
	}
	// Never released, as by a client that crashed: held until stale-after reclaims it, for the
	// witness and the refusal judges alike. The worker goes on after its hold.
	c.judged.Abandoned = releases && s.abandons(c.worker)
	// Kept in the trace only when judged, so it shows exactly the admits the evidence counted,
	// and before the evidence can name it behind a first overshoot (Evidence.Admit).
	keep := func() {
		s.recorders[c.worker].Keep(true, stamp.UnixMilli(), c.judged.SentUs, c.judged.RepliedUs, lateness)
	}
	if ev.Admit(c.judged, keep) == overshoot.TooLate {
		s.logCall(c)
		return wait, false
	}
	if c.judged.Abandoned {
		s.abandoned.Add(1)
		s.judged(c)
		s.logCall(c)
		return wait + s.cfg.Hold, false
	}
	if !releases {
		s.logCall(c)
	}
	return wait + s.cfg.Hold, releases
}

// retriedFirst tells the refusal judges of the first attempt of c, a request sent again after
// its connection was closed under it: the endpoint may have decided it too, and admitted it,
// unseen. It counts as a call that may have admitted (refusal.Unknown), so no refusal is proven
// wrong for want of it; the overshoot evidence, which it can only have strengthened, leaves it out.
func (s *strategyState) retriedFirst(c *decisionCall) {
	if s.logs == nil {
		return
	}
	first := c.judged
	first.Outcome = evidence.Unknown
	s.logs[c.worker].Record(first)
	if s.callLogs != nil {
		s.callLogs[c.worker].add(RecordedCall{Decision: first, Strategy: int32(s.index), Worker: int32(c.worker), FirstAttempt: true})
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

// sinceBegin is a stamp (µs) as a time since the run's start on the stamps' clock.
func (s *strategyState) sinceBegin(stampUs int64) time.Duration {
	return time.Duration(stampUs-s.beginMs*1000) * time.Microsecond
}

// ceilMicros is d in µs, rounded up: a reply is never taken for earlier than it came.
func ceilMicros(d time.Duration) int64 { return int64((d + time.Microsecond - 1) / time.Microsecond) }
