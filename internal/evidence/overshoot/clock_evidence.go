package overshoot

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

// How the client-time evidence (the stamps the scripts were given, or that answered their TIME
// on the virtual clock) allows for reordering, so a correct limiter is never blamed however its
// callers' clocks disagree, and how sharp it stays.

// Limits are what a strategy's window or bucket checkers are built from: its numbers, and how
// far its callers' clocks disagree.
type Limits struct {
	Limit  int64 // windows: the limit; bucket: the burst
	Window time.Duration
	Rate   float64 // bucket: refill per second
	Skew   time.Duration
}

// Clock is what a window or bucket checker on client time needs beyond the limit.
type Clock struct {
	// Aligned: a fixed window's windows start at multiples of the window (SlidingChecker);
	// otherwise their alignment is unknown (UnalignedChecker).
	Aligned bool
	// LateMs is the most an admit judged by the unaligned fixed window or the bucket may be late
	// (0: no bound, the other checkers); later ones are left out.
	LateMs int64
	// BucketTiers are the bucket's lateness tiers (ms, increasing; the last is lateMs): the
	// admits at most tiers[i] late are judged together with the slack that lateness needs.
	BucketTiers []int64
}

// NewLateBucket is the bucket's evidence on the stamps in lateness tiers (tiers in ms,
// increasing): the admits at most tiers[i] late are judged together with the slack that
// lateness needs (internal/evidence/kind/bucket says why).
func NewLateBucket(l Limits, tiers []int64, horizonMs int64) Checker {
	b := &lateBucket{tiers: tiers}
	for _, tier := range tiers {
		c := NewBucketChecker(l.Limit, l.Rate, 1, horizonMs)
		c.slack = l.Rate / 1000 * float64(tier)
		c.tierMs = tier
		b.checkers = append(b.checkers, c)
	}
	return b
}

// lateBucket is the bucket's evidence in lateness tiers (NewLateBucket).
type lateBucket struct {
	Plain
	tiers    []int64 // ms
	checkers []*BucketChecker
}

// Admit implements Checker: the admit joins every tier at least as late as it was; one of
// unknown lateness, the widest only.
func (b *lateBucket) Admit(d evidence.Decision, kept func()) Outcome {
	kept()
	if d.LateUs < 0 {
		b.checkers[len(b.checkers)-1].AdmitMs(d.AtMs)
		return Judged
	}
	late := time.Duration(d.LateUs) * time.Microsecond
	for i, tier := range b.tiers {
		if late <= time.Duration(tier)*time.Millisecond {
			b.checkers[i].AdmitMs(d.AtMs)
		}
	}
	return Judged
}

// ShareHistory implements Checker.
func (b *lateBucket) ShareHistory(h *HistoryBudget) {
	for _, c := range b.checkers {
		c.ShareHistory(h)
	}
}

// OnFirstOver implements Checker: whichever tier proves overshoot first.
func (b *lateBucket) OnFirstOver(report func(Moment)) {
	for _, c := range b.checkers {
		c.OnFirstOver(report)
	}
}

func (b *lateBucket) combine(result func(*BucketChecker) CheckResult) CheckResult {
	var out CheckResult
	for i, c := range b.checkers {
		r := result(c)
		out.Peak, out.Overshoot, out.OvershootEvent = max(out.Peak, r.Peak), max(out.Overshoot, r.Overshoot), max(out.OvershootEvent, r.OvershootEvent)
		if i == len(b.checkers)-1 { // the widest tier holds every judged admit
			out.Current, out.Unjudged = r.Current, r.Unjudged
		}
	}
	return out
}

// Result implements Checker.
func (b *lateBucket) Result() CheckResult { return b.combine((*BucketChecker).Result) }

// Finish implements Checker.
func (b *lateBucket) Finish() CheckResult { return b.combine((*BucketChecker).Finish) }

// Stamp is the time a call is judged at: its now as the script could know it, to the
// millisecond, or to the second for a script told whole seconds (TimeQuantum).
func Stamp(quantum time.Duration, now time.Time) time.Time {
	if quantum > time.Millisecond {
		return now.Truncate(quantum)
	}
	return time.UnixMilli(now.UnixMilli())
}

// Lateness is how far behind the newest time the limiter may have seen a call's stamp can
// be when the call reaches Redis; ahead is the time from stamping to the reply plus how far the
// most advanced worker clock runs ahead of this one's. A script told the time to the millisecond or
// finer may have seen any time up to now + ahead: the stamp's own rounding counts too. One told
// whole seconds sees whole seconds only: the newest it can have seen is the second of now +
// ahead, so a call late by a few milliseconds is late by nothing unless a second turned.
func Lateness(quantum time.Duration, now time.Time, ahead time.Duration) time.Duration {
	if quantum > time.Millisecond {
		return now.Add(ahead).Truncate(quantum).Sub(now.Truncate(quantum))
	}
	return now.Sub(time.UnixMilli(now.UnixMilli())) + ahead
}

// The monotone virtual clock (StrategyRun.MonotoneTime). The hammer answers a call's first TIME
// with T_i = max(t_i, M), t_i its stamp and M the key's mark: the answer of the key's last call
// Redis ran that read TIME (limiter.TimeKey), and stores T_i as the mark. So, in the order Redis
// runs them, the answers never go back, and, by induction over that order, each one is a stamp of
// a call on the key that Redis ran no later than call i. Every such call was sent before Redis ran
// it, so before i's reply was read; each call's stamp is counted in its key's sentHigh before it is
// sent (strategyState.stamping), so sentHigh read after i's reply holds it:
//
//	t_i <= T_i <= H_i,   H_i = sentHigh of i's key read after i's reply.
//
// (A mark lost to its TTL only lowers M, so T_i stays within the bounds; the bound holds for a
// call's later TIMEs too, which answer the same.) The evidence then uses only that T_i lies in
// [t_i, H_i] and that the limiter decides by a clock that never goes back:
//   - the bucket and the first-hit window judge the admit at t_i with its lateness at least
//     H_i - t_i: their proofs (above, and UnalignedChecker) already allow a call to be decided at
//     any time in [t_i, t_i + λ_i];
//   - an epoch-aligned fixed window counts the admit in the window of t_i, which is T_i's only
//     when [t_i, H_i] lies in one window (both rounded as the script rounds: Stamp); an
//     admit whose span crosses a window's end is left out (Evidence.isTooLate), which only
//     removes evidence;
//   - a sliding window judges, with the IntervalChecker, the union of [t_i, H_i] and the real
//     interval [s_i, r_i] in which Redis ran the call (sent to replied), each from the run's
//     start. TIME is virtual but a TTL is not: a log kept for one window (PEXPIRE window, right
//     on the server's clock) is gone for a call that runs a window after the last admit, even
//     when its TIME, lagging the real clock more than theirs did, is less than a window after
//     them. Admits certainly inside one span (less than a window, less the allowances for
//     rounding and clock rates) of the union were decided at virtual times less than a window
//     apart, on a clock that never goes back, and ran less than a window apart on the server's
//     clock; so a limiter correct on the server's clock, which keeps each admit's record at
//     least a window after it ran, still held every earlier one's when the last one ran, within
//     a window of its TIME: more than the limit of them is an overshoot. One window-long span
//     only (TwoClockSliding says why). An offset between the two clocks' origins costs
//     sharpness only: each dimension fits the span in its own terms;
//   - the concurrency witness counts a member from its stamp t_i for stale-after: a limiter that
//     scored it at T_i >= t_i reclaims it no sooner; and no TIME answered before an admit is
//     recorded is later than the run's clock plus the skew then (H_i is a stamp sent by then),
//     the clock the witness records admits at;
//   - the refusal judges take [t_i, H_i] as the call's StampLo and StampHi, which their rules read
//     as the span of the time its script used; the aligned window's rule, which reads one window
//     per call, gives way to the sliding bound (which holds for every alignment), and a call of
//     unknown outcome that ran before k read a time no later than k's (the answers never go
//     back), as on the server's clock.
// At --skew 0, H_i - t_i is about the call's round trip, so nearly every admit is judged as
// before; under a skew the spans widen with it, as the lateness did (the sliding window's by
// up to the worker's own skew, the distance between its stamps and the real clock).
