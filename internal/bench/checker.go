package bench

import (
	"math"
	"sync"
	"sync/atomic"
)

// Checker watches admitted requests and measures the worst excess over the limit. It never
// trusts a limiter's own reply: it sees only when requests were admitted and released.
type Checker interface {
	// Admit records one admitted request decided at nowMs. It returns true when this admit
	// is evidence of overshoot as far as can be told at once (the concurrency witness).
	Admit(nowMs int64)
	// Release records the end of an admitted request (concurrency; a no-op elsewhere),
	// called before the release is sent so the witness never over-counts.
	Release()
	// Result returns the peak, overshoot and overshoot events so far.
	Result() CheckResult
	// Finish settles what is still pending (events that may still arrive out of order).
	Finish() CheckResult
}

// CheckResult is a checker's verdict.
type CheckResult struct {
	Peak           int64 // highest in-flight, per-window count, or tokens drawn beyond refill
	Overshoot      int64 // max(0, peak - limit)
	OvershootEvent int64 // admits that went over the limit
	Current        int64 // in flight now, or the count of the newest window
}

// HeldChecker is the concurrency limiter's checker. Each admitted request is held until its
// release, which names its own admit (id), so a release can never cancel another request's
// admit. nowMs is the decision time the limiter scored the request by and atMs the time the
// admit is recorded (same clock): a request stops counting as evidence once stale-after has
// passed since its decision, because from then on the limiter may rightly have forgotten it
// (reclaimed as abandoned, or its whole set expired after stale-after without a write).
type HeldChecker interface {
	Checker
	// AdmitHeld records request id, decided at nowMs, admitted (its acquire returned) at atMs.
	AdmitHeld(id uint64, nowMs, atMs int64)
	// ReleaseHeld records the end of request id, before its release is sent.
	ReleaseHeld(id uint64)
}

// Witness is the in-process witness for the concurrency limiter: a request counts from after
// its acquire returned allowed until before its release starts, so more than limit requests
// held at once prove overshoot, provided the limiter had to remember them all: each decided
// less than stale-after ago. Any member the limiter holds was written no earlier than its
// decision, and neither the reclaim (score <= now - stale-after) nor the set's TTL (stale-after
// from the newest write) can remove it sooner.
type Witness struct {
	limit      int64
	staleAfter int64 // ms; 0: the limiter never reclaims
	mu         sync.Mutex
	held       map[uint64]int64 // id -> decision time (ms)
	anon       []uint64         // ids given by Admit, released last-in first-out by Release
	nextAnon   uint64
	inFlight   atomic.Int64
	peak       atomic.Int64
	tickPeak   atomic.Int64 // highest value since the last TakeTickPeak
	events     atomic.Int64
}

// NewWitness returns a witness for a concurrency limit whose limiter reclaims members older
// than staleAfterMs (0: never).
func NewWitness(limit, staleAfterMs int64) *Witness {
	return &Witness{limit: limit, staleAfter: staleAfterMs, held: map[uint64]int64{}}
}

// Admit implements Checker for callers without request ids, taking the admit to be recorded
// at its decision time; Release pairs with the newest.
func (w *Witness) Admit(nowMs int64) { w.AdmitHeld(w.anonAdmit(), nowMs, nowMs) }

// Release implements Checker: it ends the newest request admitted by Admit.
func (w *Witness) Release() {
	if id, ok := w.anonRelease(); ok {
		w.ReleaseHeld(id)
	}
}

// anonAdmit gives an id to an admit that came without one.
func (w *Witness) anonAdmit() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextAnon++
	id := w.nextAnon | 1<<63 // apart from the engine's ids
	w.anon = append(w.anon, id)
	return id
}

// anonRelease names the newest admit that came without an id.
func (w *Witness) anonRelease() (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.anon) == 0 {
		return 0, false
	}
	id := w.anon[len(w.anon)-1]
	w.anon = w.anon[:len(w.anon)-1]
	return id, true
}

// AdmitHeld implements HeldChecker.
func (w *Witness) AdmitHeld(id uint64, nowMs, atMs int64) {
	w.mu.Lock()
	w.held[id] = nowMs
	n := int64(len(w.held))
	w.inFlight.Store(n)
	if n > w.limit && w.staleAfter > 0 {
		n = 0
		for _, decided := range w.held {
			if decided > atMs-w.staleAfter {
				n++
			}
		}
	}
	w.mu.Unlock()
	w.observe(n)
}

// ReleaseHeld implements HeldChecker.
func (w *Witness) ReleaseHeld(id uint64) {
	w.mu.Lock()
	delete(w.held, id)
	w.inFlight.Store(int64(len(w.held)))
	w.mu.Unlock()
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

// msRing counts admits per millisecond over a span of recent milliseconds, and settles
// each millisecond once no more admits for it can arrive (horizon), in time order.
type msRing struct {
	mu       sync.Mutex
	counts   []int64 // ring indexed by ms mod len
	started  bool
	settled  int64 // every ms <= settled has been handed to settle
	newest   int64 // newest ms seen
	horizon  int64 // how far behind newest an admit may still arrive
	late     int64 // admits for ms already settled: left out, never moved (moving one would invent evidence)
	settleFn func(ms int64, n int64)
}

func newMSRing(span, horizon int64, settle func(ms, n int64)) *msRing {
	return &msRing{counts: make([]int64, span+horizon+2), horizon: horizon, settleFn: settle}
}

func (r *msRing) add(ms int64) {
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
	if ms > r.newest {
		r.newest = ms
	}
	r.advance(r.newest - r.horizon)
	r.counts[ms%int64(len(r.counts))]++
}

// advance settles every millisecond up to through.
func (r *msRing) advance(through int64) {
	for r.settled < through {
		r.settled++
		i := r.settled % int64(len(r.counts))
		n := r.counts[i]
		r.counts[i] = 0
		r.settleFn(r.settled, n)
	}
}

// pending calls fn for every millisecond not yet settled, oldest first, with its count, and
// count(ms) reads any millisecond still in the ring. The caller holds r.mu.
func (r *msRing) pending(fn func(ms, n int64)) {
	if !r.started {
		return
	}
	for ms := r.settled + 1; ms <= r.newest; ms++ {
		fn(ms, r.count(ms))
	}
}

func (r *msRing) count(ms int64) int64 { return r.counts[ms%int64(len(r.counts))] }

func (r *msRing) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		r.advance(r.newest)
	}
}

// SlidingChecker checks "at most limit admits in any window of window ms", the sliding-window
// invariant, over the admitted now values. It also serves the fixed window when aligned.
type SlidingChecker struct {
	limit, window int64
	aligned       bool // fixed window: windows start at multiples of window
	ring          *msRing
	// settled state, guarded by ring.mu
	hist         []int64 // last window ms of settled counts
	sum          int64
	peak, events int64
	pub          atomic.Pointer[CheckResult]
}

// NewSlidingChecker checks any window of windowMs (sliding) or only aligned windows (fixed).
// horizonMs is how late an admit may be recorded after a newer one (the request timeout).
func NewSlidingChecker(limit, windowMs, horizonMs int64, aligned bool) *SlidingChecker {
	c := &SlidingChecker{limit: limit, window: windowMs, aligned: aligned, hist: make([]int64, windowMs)}
	c.ring = newMSRing(windowMs, horizonMs, c.settle)
	c.pub.Store(&CheckResult{})
	return c
}

func (c *SlidingChecker) settle(ms, n int64) {
	i := ms % c.window
	if c.aligned && i == 0 {
		c.sum = 0 // a new fixed window starts counting from zero
		clear(c.hist)
	}
	c.sum += n - c.hist[i]
	c.hist[i] = n
	if c.sum > c.peak {
		c.peak = c.sum
	}
	if n > 0 && c.sum > c.limit {
		c.events += min(n, c.sum-c.limit)
	}
	c.pub.Store(&CheckResult{Peak: c.peak, Overshoot: max(0, c.peak-c.limit), OvershootEvent: c.events, Current: c.sum})
}

// Admit implements Checker.
func (c *SlidingChecker) Admit(nowMs int64) { c.ring.add(nowMs) }

// Release implements Checker.
func (c *SlidingChecker) Release() {}

// Result implements Checker: the settled verdict plus the milliseconds still open to late
// admits, walked without settling them, so a live view does not lag by the horizon.
func (c *SlidingChecker) Result() CheckResult {
	c.ring.mu.Lock()
	defer c.ring.mu.Unlock()
	res := *c.pub.Load()
	sum, settled := c.sum, c.ring.settled
	c.ring.pending(func(ms, n int64) {
		i := ms % c.window
		switch {
		case c.aligned:
			if i == 0 {
				sum = 0 // a new fixed window
			}
		case ms-c.window <= settled:
			sum -= c.hist[i] // the millisecond leaving the window, already settled
		default:
			sum -= c.ring.count(ms - c.window)
		}
		sum += n
		if sum > res.Peak {
			res.Peak = sum
		}
		if n > 0 && sum > c.limit {
			res.OvershootEvent += min(n, sum-c.limit)
		}
	})
	res.Current = sum
	res.Overshoot = max(0, res.Peak-c.limit)
	return res
}

// Finish implements Checker.
func (c *SlidingChecker) Finish() CheckResult {
	c.ring.finish()
	return c.Result()
}

// BucketChecker checks the token-bucket invariant over admitted now values: in any interval
// of T ms at most burst + rate*T/1000 admits (cost 1). Peak is the largest draw beyond refill,
// count - rate*T, over any interval; overshoot is how far that exceeds burst, in whole requests.
type BucketChecker struct {
	burst   int64
	rate    float64 // tokens per ms
	cost    int64
	ring    *msRing
	total   int64   // admits settled so far: A(t)
	minBase float64 // min over t1 of A(t1-1) - rate*t1
	haveMin bool
	peak    float64
	events  int64
	pub     atomic.Pointer[CheckResult]
}

// NewBucketChecker checks a bucket of burst tokens refilled at ratePerSec, cost tokens a request.
func NewBucketChecker(burst int64, ratePerSec float64, cost, horizonMs int64) *BucketChecker {
	if cost <= 0 {
		cost = 1
	}
	c := &BucketChecker{burst: burst, rate: ratePerSec / 1000, cost: cost}
	c.ring = newMSRing(1, horizonMs, c.settle)
	c.pub.Store(&CheckResult{})
	return c
}

func (c *BucketChecker) settle(ms, n int64) {
	t := float64(ms)
	base := float64(c.total) - c.rate*t
	if !c.haveMin || base < c.minBase {
		c.minBase, c.haveMin = base, true
	}
	if n == 0 {
		return
	}
	c.total += n * c.cost
	drawn := float64(c.total) - c.rate*t - c.minBase
	if drawn > c.peak {
		c.peak = drawn
	}
	// Whole requests beyond burst: a fraction of a token of excess is clock noise between
	// racing clients, not a request that should have been refused.
	over := int64(math.Floor(drawn+1e-9)) - c.burst
	if over > 0 {
		c.events += min(n, over)
	}
	peak := int64(math.Floor(c.peak + 1e-9))
	c.pub.Store(&CheckResult{Peak: peak, Overshoot: max(0, peak-c.burst), OvershootEvent: c.events, Current: n})
}

// Admit implements Checker.
func (c *BucketChecker) Admit(nowMs int64) { c.ring.add(nowMs) }

// Release implements Checker.
func (c *BucketChecker) Release() {}

// Result implements Checker: the settled verdict plus the open milliseconds, walked without
// settling them.
func (c *BucketChecker) Result() CheckResult {
	c.ring.mu.Lock()
	defer c.ring.mu.Unlock()
	res := *c.pub.Load()
	total, minBase, haveMin, peak := c.total, c.minBase, c.haveMin, c.peak
	c.ring.pending(func(ms, n int64) {
		t := float64(ms)
		if base := float64(total) - c.rate*t; !haveMin || base < minBase {
			minBase, haveMin = base, true
		}
		if n == 0 {
			return
		}
		total += n * c.cost
		drawn := float64(total) - c.rate*t - minBase
		peak = max(peak, drawn)
		if over := int64(math.Floor(drawn+1e-9)) - c.burst; over > 0 {
			res.OvershootEvent += min(n, over)
		}
	})
	res.Peak = int64(math.Floor(peak + 1e-9))
	res.Overshoot = max(0, res.Peak-c.burst)
	return res
}

// Finish implements Checker.
func (c *BucketChecker) Finish() CheckResult {
	c.ring.finish()
	return c.Result()
}
