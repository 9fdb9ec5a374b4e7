package overshoot

import (
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// Checker is one key's evidence of overshoot, as its kind's model builds it (Model.Checker): told
// each decision on the key, it measures the worst excess over the limit. It never trusts a
// limiter's own reply: it sees only when requests were admitted and released. What a kind's
// checker has no use for it takes from Plain.
type Checker interface {
	// Admit judges one admitted call, reading what of d its kind's evidence reads (its stamp and
	// lateness, its interval, its request id). kept is called once the call is known to be
	// judged: before the checker can name it behind a first overshoot, or, for evidence that
	// judges a call only a lag after the newest reply, once it was taken.
	Admit(d evidence.Decision, kept func()) Outcome
	// Unjudged tells the checker of a call that may have admitted and is not judged (it failed,
	// or came too late): windows anchored at their openers must know of every call that may have
	// opened one.
	Unjudged(d evidence.Decision)
	// Release records that request id no longer holds its slot, before its release is sent, so
	// the witness never over-counts.
	Release(id uint64)
	// Result returns the peak, overshoot and overshoot events so far.
	Result() CheckResult
	// Finish settles what is still pending (events that may still arrive out of order).
	Finish() CheckResult
	// CaughtFrom is the evidence's power once finished (power.go): the smallest k >= 1 for which
	// k admits over the limit in every window (held over the limit at once, for the witness)
	// would have been proven by the evidence this run gathered; ok is false when none up to maxK
	// would have been.
	CaughtFrom(maxK int64) (k int64, ok bool)
	// CaughtFromAnchored is CaughtFrom with windows anchored at the calls that opened them
	// (--window-start first-hit), a sharper model the contract did not claim; ok is false when
	// none up to maxK would have been proven, or the evidence has no such windows.
	CaughtFromAnchored(maxK int64) (k int64, ok bool)
	// TakeTickPeak is the highest count held at once since the last call (0 but for a witness),
	// so a chart sampled per tick cannot miss a short overshoot.
	TakeTickPeak() int64
	// Early is how many admits came back sooner than the hold an endpoint promises (0 but for
	// its held spans): it does not hold its slots that long, and those admits are no evidence.
	Early() int64
	// Timeline is what the evidence proved of one window, placed at the time it was about (µs on
	// its clock), for evidence that judges long after (intervals); nil for the others, whose
	// counts the ticks already show as they happen.
	Timeline() []TimedCount
	// OnFirstOver has report told once what was behind the first overshoot (under the checker's
	// own lock: report must not call back).
	OnFirstOver(report func(Moment))
	// ShareHistory keeps what the checker keeps to state its power within b.
	ShareHistory(b *HistoryBudget)
}

// Plain is what a checker says of what its kind's evidence does not keep: embed it for the
// methods it has no use for.
type Plain struct{}

// Unjudged implements Checker: no window is anchored at an opener.
func (Plain) Unjudged(evidence.Decision) {}

// Release implements Checker: nothing is held.
func (Plain) Release(uint64) {}

// CaughtFromAnchored implements Checker: no windows anchored at their openers.
func (Plain) CaughtFromAnchored(int64) (int64, bool) { return 0, false }

// TakeTickPeak implements Checker: no count held at once.
func (Plain) TakeTickPeak() int64 { return 0 }

// Early implements Checker: no hold promised.
func (Plain) Early() int64 { return 0 }

// Timeline implements Checker: the ticks show the counts as they happen.
func (Plain) Timeline() []TimedCount { return nil }

// ShareHistory implements Checker: nothing kept to re-judge.
func (Plain) ShareHistory(*HistoryBudget) {}

// admitStamped judges an admit on its stamp (ms), through log.
func admitStamped(log *admitLog, d evidence.Decision, kept func()) Outcome {
	kept()
	log.add(d.AtMs)
	return Judged
}

// CheckResult is a checker's verdict.
type CheckResult struct {
	Peak           int64 // highest in-flight, per-window count, or tokens drawn beyond refill
	Overshoot      int64 // max(0, peak - limit)
	OvershootEvent int64 // admits that went over the limit
	Current        int64 // in flight now, or the count of the newest window
	Unjudged       int64 // admits that arrived after their window was judged: left out
}

// Witness is the in-process witness for the concurrency limiter: a request counts from after
// its acquire returned allowed until before its release starts, so more than limit requests
// held at once prove overshoot, provided the limiter had to remember them all: each decided
// less than stale-after ago. Any member the limiter holds was written no earlier than its
// decision, and neither the reclaim (score <= now - stale-after) nor the set's TTL (stale-after
// from the newest write) can remove it sooner.
//
// Each admitted request is held until its release, which names its own admit (id), so a release
// can never cancel another request's admit. A request is recorded with the decision time the
// limiter scored it by and the time its admit is recorded (same clock): it stops counting as
// evidence once stale-after has passed since its decision, because from then on the limiter may
// rightly have forgotten it (reclaimed as abandoned, or its whole set expired after stale-after
// without a write).
type Witness struct {
	Plain
	limit      int64
	staleAfter int64 // ms an abandoned request counts from its decision; 0: the limiter never reclaims
	staleLive  int64 // ms a request its client still holds counts from its decision; 0: for ever
	mu         sync.Mutex
	held       map[uint64]int64 // id -> decision time (ms)
	abandoned  []heldAt         // requests never to be released, in order of decision time
	latestAt   int64            // the latest atMs recorded: no limiter call read a later clock before it
	anon       []uint64         // ids given by Admit, released last-in first-out by Release
	nextAnon   uint64
	inFlight   atomic.Int64
	peak       atomic.Int64
	tickPeak   atomic.Int64 // highest value since the last TakeTickPeak
	events     atomic.Int64
	onOver     func(Moment) // the first overshoot's requests (fold.Explain); guarded by mu
	// recordedAt is the clock an admit is recorded at (ms): the most advanced worker clock.
	recordedAt func() int64
}

// heldAt is an abandoned request and its decision time (ms).
type heldAt struct {
	id      uint64
	decided int64
}

// OnFirstOver implements Checker: the requests counted when the witness first went
// above the limit.
func (w *Witness) OnFirstOver(report func(Moment)) {
	w.mu.Lock()
	w.onOver = report
	w.mu.Unlock()
}

// firstOver takes, once, the moment the witness first counted n above the limit (raised by
// admit by), with the ids of the requests it counted; nil when already taken. Called under mu.
func (w *Witness) firstOver(n int64, by uint64, counted func(decided int64) bool, shared bool) *Moment {
	if w.onOver == nil || n <= w.limit {
		return nil
	}
	m := &Moment{Count: n, By: by, Shared: shared, Held: make([]uint64, 0, len(w.held)+len(w.abandoned))}
	for id, decided := range w.held {
		if counted(decided) {
			m.Held = append(m.Held, id)
		}
	}
	for _, a := range w.abandoned {
		if counted(a.decided) {
			m.Held = append(m.Held, a.id)
		}
	}
	return m
}

// report hands m to the trace, once, outside the witness's lock.
func (w *Witness) report(m *Moment) {
	if m == nil {
		return
	}
	w.mu.Lock()
	report := w.onOver
	w.onOver = nil
	w.mu.Unlock()
	if report != nil {
		report(*m)
	}
}

// NewWitness returns a witness for a concurrency limit whose limiter reclaims members older
// than staleAfterMs (0: never).
func NewWitness(limit, staleAfterMs int64) *Witness {
	return &Witness{limit: limit, staleAfter: staleAfterMs, staleLive: staleAfterMs, held: map[uint64]int64{}, latestAt: math.MinInt64,
		recordedAt: func() int64 { return time.Now().UnixMilli() }}
}

// RecordAt has admits recorded at now (ms), the most advanced worker clock: a call decided by it
// may already have reclaimed a held request as abandoned. Call it before the first admit.
func (w *Witness) RecordAt(now func() int64) { w.recordedAt = now }

// Admit implements Checker: request d.ID, decided at its caller's clock, is held from now on; an
// abandoned one until stale-after reclaims it.
func (w *Witness) Admit(d evidence.Decision, kept func()) Outcome {
	return admitHeld(w, w.recordedAt, d, kept)
}

// holder is a witness: the in-process one, or one shared on Redis.
type holder interface {
	AdmitHeld(id uint64, nowMs, atMs int64)
	AbandonHeld(id uint64)
}

// admitHeld holds request d.ID in h, recorded at the clock at gives.
func admitHeld(h holder, at func() int64, d evidence.Decision, kept func()) Outcome {
	kept()
	h.AdmitHeld(d.ID, tally.FloorDiv(d.NowUs, 1000), at())
	if d.Abandoned {
		h.AbandonHeld(d.ID)
	}
	return Judged
}

// Release implements Checker.
func (w *Witness) Release(id uint64) { w.ReleaseHeld(id) }

// CountLiveFor sets how long after its decision a request that its client still holds counts
// (WitnessLive), when that differs from an abandoned request's; call it before the first admit.
func (w *Witness) CountLiveFor(ms int64) { w.staleLive = ms }

// WitnessLive is how long after its decision a request its client still holds counts, given
// staleAfter (never less than WitnessStale, so an abandoned request never outlasts a live one): stale-after less what a script told it in a unit coarser than the millisecond
// may take off it, the server's faster clock and a millisecond of rounding, but not the
// rounding of a now told in whole seconds (or a window's index). Such a limiter drops a request
// scored by a deadline of now plus one second at the next second boundary, anywhere from a
// millisecond to a second after it began: for an abandoned request that is the limiter's
// unit of time (WitnessStale allows for it), but a request still running was dropped while it
// ran, and the requests the limiter admitted in its place ran beside it: more than the limit at
// once is an overshoot of that configuration, whose stale time its clock cannot tell apart
// (the hammer's default stale-after is two of the clock's units: hammer.DefaultStaleAfterFor).
func WitnessLive(staleAfter, staleUnit time.Duration) time.Duration {
	return WitnessStale(staleAfter, 0, staleUnit)
}

// WitnessStale is how long after its decision a request unreleased (abandoned, or its release
// lost) still certainly counts in a correct limiter given staleAfter, so the witness counts it
// only that long: stale-after, less what the script may rightly take off it. A script given
// stale-after in a unit coarser than the millisecond may round it down to that unit; one told
// the time in whole seconds compares floored times, which can differ by up to a second more
// than the times do; a TTL runs on the server's clock, up to 0.1% faster than the client's, from
// a write no earlier than the decision, and a millisecond goes to rounding. The workers' skew
// needs no allowance here: the witness measures from the most advanced worker clock (AdmitHeld's
// atMs). 0 stays 0 (never reclaimed); the least is a millisecond.
func WitnessStale(staleAfter, quantum, staleUnit time.Duration) time.Duration {
	if staleAfter <= 0 {
		return 0
	}
	d := staleAfter
	if staleUnit > time.Millisecond {
		d = d.Truncate(staleUnit)
	}
	if quantum > time.Millisecond {
		d -= quantum
	}
	d -= staleAfter/1000 + time.Millisecond
	return max(d, time.Millisecond)
}

// AdmitMs records an admit without a request id, taking it to be recorded at its decision
// time; ReleaseNewest pairs with the newest.
func (w *Witness) AdmitMs(nowMs int64) {
	id := w.anonID()
	w.AdmitHeld(id, nowMs, nowMs)
	w.pushAnon(id)
}

// ReleaseNewest ends the newest request admitted by AdmitMs.
func (w *Witness) ReleaseNewest() {
	if id, ok := w.popAnon(); ok {
		w.ReleaseHeld(id)
	}
}

// anonID names an admit that came without an id, apart from the engine's ids.
func (w *Witness) anonID() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextAnon++
	return w.nextAnon | 1<<63
}

// pushAnon makes an anonymous admit releasable, once it is held: were it releasable sooner, a
// Release in between would end it before it is held, and the request that Release really
// ended would stay held for ever, counting one too many.
func (w *Witness) pushAnon(id uint64) {
	w.mu.Lock()
	w.anon = append(w.anon, id)
	w.mu.Unlock()
}

// popAnon names the newest held anonymous admit.
func (w *Witness) popAnon() (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.anon) == 0 {
		return 0, false
	}
	id := w.anon[len(w.anon)-1]
	w.anon = w.anon[:len(w.anon)-1]
	return id, true
}

// AdmitHeld records request id, decided at nowMs, admitted (its acquire returned) at atMs.
func (w *Witness) AdmitHeld(id uint64, nowMs, atMs int64) {
	w.mu.Lock()
	w.held[id] = nowMs
	// atMs was read before the lock was taken: a request recorded in between may have been
	// decided later, and its call may have reclaimed a held request as abandoned. The latest
	// atMs recorded is no earlier than any such decision.
	w.latestAt = max(w.latestAt, atMs)
	w.forgetAbandoned()
	n := int64(len(w.held) + len(w.abandoned))
	w.inFlight.Store(n)
	counted := func(int64) bool { return true }
	if n > w.limit && w.staleLive > 0 {
		n = int64(len(w.abandoned)) // every one left was decided within stale-after
		counted = func(decided int64) bool { return decided > w.latestAt-w.staleLive }
		for _, decided := range w.held {
			if counted(decided) {
				n++
			}
		}
	}
	first := w.firstOver(n, id, counted, false)
	w.mu.Unlock()
	w.observe(n)
	w.report(first)
}

// ReleaseHeld records the end of request id, before its release is sent.
func (w *Witness) ReleaseHeld(id uint64) {
	w.mu.Lock()
	delete(w.held, id)
	w.inFlight.Store(int64(len(w.held) + len(w.abandoned)))
	w.mu.Unlock()
}

// AbandonHeld records that request id will never be released, as a crashed client's: it counts
// as held until stale-after, as long as the limiter must remember it. It moves from the held to
// the abandoned, kept
// in order of decision time (they come nearly in order: the search from the back is short),
// so those the limiter may have reclaimed are forgotten from the front, and a long run's
// abandoned requests cost neither memory nor a walk at every admit.
func (w *Witness) AbandonHeld(id uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	decided, ok := w.held[id]
	if !ok {
		return
	}
	delete(w.held, id)
	i := len(w.abandoned)
	for i > 0 && w.abandoned[i-1].decided > decided {
		i--
	}
	w.abandoned = slices.Insert(w.abandoned, i, heldAt{id, decided})
}

// forgetAbandoned drops the abandoned requests decided stale-after or more before the latest
// clock recorded: no limiter call recorded later can count them (latestAt never goes back).
// Called under mu.
func (w *Witness) forgetAbandoned() {
	if w.staleAfter <= 0 || len(w.abandoned) == 0 {
		return
	}
	cut := sort.Search(len(w.abandoned), func(i int) bool { return w.abandoned[i].decided > w.latestAt-w.staleAfter })
	if cut > 0 {
		w.abandoned = append(w.abandoned[:0], w.abandoned[cut:]...)
	}
}

// observe records a witness value: raises the peak, and counts an event above the limit.
func (w *Witness) observe(v int64) {
	raise(&w.peak, v)
	raise(&w.tickPeak, v)
	if v > w.limit {
		w.events.Add(1)
	}
}

// raise sets m to v if v is higher.
func raise(m *atomic.Int64, v int64) {
	for {
		p := m.Load()
		if v <= p || m.CompareAndSwap(p, v) {
			return
		}
	}
}

// TakeTickPeak returns the highest in-flight value since the previous call and starts over
// from the current value, so a chart sampled per tick cannot miss a short overshoot.
func (w *Witness) TakeTickPeak() int64 {
	return w.tickPeak.Swap(w.inFlight.Load())
}

// Result implements Checker.
func (w *Witness) Result() CheckResult {
	peak := w.peak.Load()
	return CheckResult{Peak: peak, Overshoot: max(0, peak-w.limit), OvershootEvent: w.events.Load(), Current: w.inFlight.Load()}
}

// Finish implements Checker.
func (w *Witness) Finish() CheckResult { return w.Result() }

// SlidingChecker checks "at most limit admits in any window of window ms", the sliding-window
// invariant, over the admitted now values. It also serves the fixed window when aligned.
//
// The sliding families it holds on client time (internal/corpus makes each): a log counted after
// the call's own now less a window and pruned two windows back (the shipped script), a list of the
// last limit times checked at the call's now (a moving window), told the time to the ms or finer,
// or in whole seconds (judged at whole seconds). A log pruned at exactly now - window is not among
// them: a call whose now is older than one that already ran finds members of its own window
// pruned and admits past the limit of its window (buggy/sliding_window_prune_exact.lua), which the
// default load's skewed clocks expose. A log pruned by the server's own clock, or by the virtual
// clock's TIME that never goes back per key, is judged over intervals (IntervalChecker).
type SlidingChecker struct {
	Plain
	limit, window int64
	aligned       bool // fixed window: windows start at multiples of window
	log           *admitLog
	// settled state, guarded by log.mu
	hist         tally.Queue // sliding: the settled admits of the last window
	windowIndex  int64       // aligned: the window sum counts
	sum          int64       // settled admits in the last (or the aligned) window
	peak, events int64
	onOver       func(Moment) // the first overshoot's admits, called once when settled
}

// OnFirstOver implements Checker: the admits of the first window settled above the
// limit (aligned: from the window's start; sliding: the window ending at the admit that went over).
func (c *SlidingChecker) OnFirstOver(report func(Moment)) {
	c.log.mu.Lock()
	c.onOver = report
	c.log.mu.Unlock()
}

// NewSlidingChecker checks any window of windowMs (sliding) or only aligned windows (fixed).
// horizonMs is how late an admit may be recorded after a newer one (the request timeout).
func NewSlidingChecker(limit, windowMs, horizonMs int64, aligned bool) *SlidingChecker {
	c := &SlidingChecker{limit: limit, window: windowMs, aligned: aligned, windowIndex: math.MinInt64}
	c.log = newAdmitLog(horizonMs, c.settle)
	return c
}

func (c *SlidingChecker) settle(ms, n int64) {
	if c.aligned {
		if w := tally.FloorDiv(ms, c.window); w != c.windowIndex {
			c.windowIndex, c.sum = w, 0 // a new fixed window starts counting from zero
		}
	} else {
		for c.hist.Len() > 0 && c.hist.Front().Ms <= ms-c.window {
			c.sum -= c.hist.PopFront().N // left the window (t-window, t]
		}
		c.hist.Add(ms, n)
	}
	c.sum += n
	c.peak = max(c.peak, c.sum)
	if c.sum > c.limit {
		c.events += min(n, c.sum-c.limit)
		if report := c.onOver; report != nil {
			c.onOver = nil
			from := ms - c.window + 1
			if c.aligned {
				from = c.windowIndex * c.window
			}
			report(Moment{Count: c.sum, FromMs: from, ToMs: ms})
		}
	}
}

// Admit implements Checker: on its stamp.
func (c *SlidingChecker) Admit(d evidence.Decision, kept func()) Outcome {
	return admitStamped(c.log, d, kept)
}

// AdmitMs records an admit at nowMs.
func (c *SlidingChecker) AdmitMs(nowMs int64) { c.log.add(nowMs) }

// ShareHistory implements Checker.
func (c *SlidingChecker) ShareHistory(b *HistoryBudget) { c.log.history.budget = b }

// Result implements Checker: the settled verdict plus the milliseconds still open to late
// admits, walked without settling them, so a live view does not lag by the horizon. The walk
// visits only milliseconds that saw admits.
func (c *SlidingChecker) Result() CheckResult {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	res := CheckResult{Peak: c.peak, OvershootEvent: c.events}
	sum, pending := c.sum, &c.log.pending
	observe := func(n int64) {
		res.Peak = max(res.Peak, sum)
		if sum > c.limit {
			res.OvershootEvent += min(n, sum-c.limit)
		}
	}
	if c.aligned {
		w := c.windowIndex
		for i := 0; i < pending.Len(); i++ {
			p := pending.At(i)
			if pw := tally.FloorDiv(p.Ms, c.window); pw != w {
				w, sum = pw, 0
			}
			sum += p.N
			observe(p.N)
		}
		if c.log.started && tally.FloorDiv(c.log.newest, c.window) != w {
			sum = 0
		}
	} else {
		// The admits leaving the window, oldest first: the settled history, then the pending.
		settled := c.hist.Len()
		entry := func(i int) tally.Count {
			if i < settled {
				return c.hist.At(i)
			}
			return pending.At(i - settled)
		}
		tail := 0
		leave := func(through int64) {
			for tail < settled+pending.Len() && entry(tail).Ms <= through {
				sum -= entry(tail).N
				tail++
			}
		}
		for i := 0; i < pending.Len(); i++ {
			p := pending.At(i)
			sum += p.N
			leave(p.Ms - c.window)
			observe(p.N)
		}
		if c.log.started {
			leave(c.log.newest - c.window)
		}
	}
	res.Current = sum
	res.Overshoot = max(0, res.Peak-c.limit)
	res.Unjudged = c.log.late
	return res
}

// Finish implements Checker.
func (c *SlidingChecker) Finish() CheckResult {
	c.log.finish()
	return c.Result()
}

// BucketChecker checks the token-bucket invariant over admitted now values: in any interval
// of T ms at most burst + rate*T/1000 admits (cost 1). Peak is the largest draw beyond refill,
// count - rate*T, over any interval; overshoot is how far that exceeds burst, in whole requests.
//
// The draw over [t1, t] is A(t) - A(t1-1) - rate*(t-t1) for the admit count A, so the worst
// interval ending at t starts where A(t1-1) - rate*t1 is least. Between two admits A is flat
// and that base falls with t1, so the least base is always found at a millisecond that saw
// admits: only those are settled.
type BucketChecker struct {
	Plain
	burst   int64
	rate    float64 // tokens per ms
	cost    int64
	slack   float64 // tokens a correct bucket may seem to exceed burst + rate*T by (clock_evidence.go)
	log     *admitLog
	settled bucketState // guarded by log.mu
	current int64       // admits in the newest settled millisecond
	onOver  func(Moment)
	tierMs  int64 // lateBucket: the lateness of the admits this checker holds, at most (0: any)
}

// OnFirstOver implements Checker: the admits of the interval whose draw first proved
// a request too many, once settled.
func (c *BucketChecker) OnFirstOver(report func(Moment)) {
	c.log.mu.Lock()
	c.onOver = report
	c.log.mu.Unlock()
}

// bucketState is what settling moves forward; Result walks the open milliseconds on a copy.
type bucketState struct {
	total   int64   // admits so far: A(t)
	minBase float64 // min over t1 of A(t1-1) - rate*t1
	minMs   int64   // the t1 of minBase, and A(t1-1) there: the worst interval starts at t1
	minA    int64
	haveMin bool
	peak    float64
	events  int64
}

// NewBucketChecker checks a bucket of burst tokens refilled at ratePerSec, cost tokens a request.
func NewBucketChecker(burst int64, ratePerSec float64, cost, horizonMs int64) *BucketChecker {
	if cost <= 0 {
		cost = 1
	}
	c := &BucketChecker{burst: burst, rate: ratePerSec / 1000, cost: cost}
	c.log = newAdmitLog(horizonMs, c.settle)
	return c
}

// step adds n admits at ms.
func (s *bucketState) step(c *BucketChecker, ms, n int64) {
	t := float64(ms)
	if base := float64(s.total) - c.rate*t; !s.haveMin || base < s.minBase {
		s.minBase, s.haveMin, s.minMs, s.minA = base, true, ms, s.total
	}
	s.total += n * c.cost
	drawn := float64(s.total) - c.rate*t - s.minBase
	s.peak = max(s.peak, drawn)
	if over := c.excess(drawn); over > 0 {
		s.events += min(n, over)
	}
}

// excess is how many requests a draw proves were admitted beyond the bucket: any excess over
// burst + slack is at least one whole request too many (1e-9 absorbs float rounding).
func (c *BucketChecker) excess(drawn float64) int64 {
	return max(0, int64(math.Ceil(drawn-float64(c.burst)-c.slack-1e-9)))
}

func (c *BucketChecker) settle(ms, n int64) {
	before := c.settled.events
	c.settled.step(c, ms, n)
	c.current = n
	if report := c.onOver; report != nil && before == 0 && c.settled.events > 0 {
		c.onOver = nil
		report(Moment{Count: (c.settled.total - c.settled.minA) / c.cost, FromMs: c.settled.minMs, ToMs: ms, LateMs: c.tierMs})
	}
}

// Admit implements Checker: on its stamp.
func (c *BucketChecker) Admit(d evidence.Decision, kept func()) Outcome {
	return admitStamped(c.log, d, kept)
}

// AdmitMs records an admit at nowMs.
func (c *BucketChecker) AdmitMs(nowMs int64) { c.log.add(nowMs) }

// ShareHistory implements Checker.
func (c *BucketChecker) ShareHistory(b *HistoryBudget) { c.log.history.budget = b }

// Result implements Checker: the settled verdict plus the open milliseconds that saw admits,
// walked without settling them.
func (c *BucketChecker) Result() CheckResult {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	s := c.settled
	for i := 0; i < c.log.pending.Len(); i++ {
		p := c.log.pending.At(i)
		s.step(c, p.Ms, p.N)
	}
	overshoot := c.excess(s.peak)
	peak := max(int64(math.Floor(s.peak+1e-9)), c.burst+overshoot)
	return CheckResult{Peak: peak, Overshoot: overshoot, OvershootEvent: s.events, Current: c.current,
		Unjudged: c.log.late}
}

// Finish implements Checker.
func (c *BucketChecker) Finish() CheckResult {
	c.log.finish()
	return c.Result()
}
