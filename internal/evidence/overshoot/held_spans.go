package overshoot

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

// HeldSpans is the concurrency evidence for a limiter the hammer cannot watch: an endpoint
// behind HTTP that holds each admitted request's slot for a hold D it promises (--hold D),
// judged on the client's clock alone.
//
// The promise: an admitted request's slot is taken at some instant a, held at least D after a,
// and released before the response is sent. (A handler that acquires, works or sleeps D,
// releases, then answers keeps it; so does one that holds longer. One whose limiter reclaims
// slots sooner than D, a stale-after below the hold, does not: it may drop a slot still held.)
//
// Prove it. Let s be an instant before the request's first byte left the client and r one after
// the response's first byte arrived (httptarget's GotConn and GotFirstResponseByte). The
// endpoint cannot take the slot before it has the request, so a >= s. It answers no sooner
// than D after a, and the answer arrives after it is sent, so a + D <= r, that is a <= r - D. The slot is held over
// [a, a + D] for some a in [s, r - D]; every such interval contains [r - D, s + D] (its start
// a <= r - D, its end a + D >= s + D). So the request certainly holds its slot over
// [r - D, s + D], an interval that is not empty when r - s <= 2D. A correct limiter holds at
// most limit slots at any instant, so more than limit such spans that share one instant prove
// that it admitted more than its limit at once.
//
// An admit answered sooner than D after it was sent (r - s < D) broke the promise: no a fits,
// and it is no evidence (counted in Early, so the verdict can say the hold is not kept). One
// answered later than 2D after it was sent has an empty span: unjudged.
//
// Allowances, so that a correct endpoint is never blamed: D is measured by the endpoint's
// clock, which may run up to 0.1% faster than the client's, and its timer may fire up to a
// millisecond early (a Node.js setTimeout does); so the spans use D' = D - D/1000 - 1ms, which
// such an endpoint still holds on the client's clock. Instants are rounded outwards to the
// microsecond (s down, r up), which only shortens a span. The spans are closed: with D' below
// every hold, two requests whose spans meet only at one instant both held their slots there.
//
// The correct families it must hold (held_spans_test.go, each randomized): a semaphore holding
// exactly D, one holding longer than D, one that releases right before answering and one that
// answers a while after releasing, slow networks on either side (request and response), and an
// endpoint whose clock runs 0.1% fast or whose timer fires a millisecond early. Its power: a
// limiter admitting limit+1 at once is caught once the load keeps more than limit requests in
// their spans together (CaughtFrom states it per run).
//
// Judging: spans are swept in the order of their starts (r - D'): at each start, the spans
// started and not yet ended are counted. They arrive in about that order (in reply order); a
// span is settled once a start later by lag has been seen, and one that arrives after a later
// start was settled is left unjudged (Unjudged), never counted out of place.
type HeldSpans struct {
	Plain
	limit int64
	hold  int64 // µs: D', the hold every correct endpoint keeps on the client's clock
	lag   int64 // µs

	mu       sync.Mutex
	pending  []heldSpan // spans not yet settled, sorted by start
	active   endHeap    // ends of the settled spans that may still cover the next start
	frontier int64      // start of the last settled span
	started  bool
	newest   int64 // the latest start seen
	unjudged int64
	early    int64
	peak     int64
	events   int64
	current  int64
	pub      atomic.Pointer[CheckResult]
	onOver   func(Moment)
}

// heldSpan is the interval over which one admit certainly held its slot, µs.
type heldSpan struct{ start, end int64 }

// HoldAllowance is the hold every endpoint that promises hold keeps on the client's clock: hold
// less 0.1% (a faster clock) and 1 ms (an early timer); 0 when nothing is left.
func HoldAllowance(hold time.Duration) time.Duration {
	return max(0, hold-hold/1000-time.Millisecond)
}

// NewHeldSpans judges admits of an endpoint that promises to hold each slot hold (D) against a
// concurrency limit.
func NewHeldSpans(limit int64, hold time.Duration) *HeldSpans {
	c := &HeldSpans{limit: limit, hold: HoldAllowance(hold).Microseconds(), lag: 200_000}
	c.pub.Store(&CheckResult{})
	return c
}

// OnFirstOver implements Checker: the admits whose spans shared the first instant more than
// the limit did, as the requests sent at or after FromUs and answered by ToUs (a span covers
// instant x exactly when its request was sent at or after x - D' and answered by x + D').
func (c *HeldSpans) OnFirstOver(report func(Moment)) {
	c.mu.Lock()
	c.onOver = report
	c.mu.Unlock()
}

// AdmitInterval records an admit sent at sent and answered at received,
// on the run's monotonic clock. False when it is no evidence: answered sooner than the hold
// (Early), too slow for a span, or later than the judging.
func (c *HeldSpans) AdmitInterval(sent, received time.Duration) bool {
	s, r := sent.Microseconds(), int64((received+time.Microsecond-1)/time.Microsecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := heldSpan{start: r - c.hold, end: s + c.hold}
	switch {
	case c.hold <= 0 || r-s < c.hold:
		c.early++
		c.unjudged++
	case sp.start > sp.end || (c.started && sp.start < c.frontier):
		c.unjudged++
	default:
		c.insert(sp)
		c.newest = max(c.newest, sp.start)
		for len(c.pending) > 0 && c.pending[0].start+c.lag < c.newest {
			c.settleNext()
		}
		c.publish()
		return true
	}
	c.publish()
	return false
}

// insert adds sp to pending in order of start: spans come nearly in order.
func (c *HeldSpans) insert(sp heldSpan) {
	c.pending = append(c.pending, sp)
	i := len(c.pending) - 1
	for i > 0 && c.pending[i-1].start > sp.start {
		c.pending[i] = c.pending[i-1]
		i--
	}
	c.pending[i] = sp
}

// settleNext takes the earliest pending span and counts the spans that cover its start: every
// settled one not yet ended (all started no later), and itself.
func (c *HeldSpans) settleNext() {
	sp := c.pending[0]
	c.pending = c.pending[1:]
	x := sp.start
	c.started, c.frontier = true, x
	for c.active.Len() > 0 && c.active[0] < x {
		heap.Pop(&c.active)
	}
	heap.Push(&c.active, sp.end)
	n := int64(c.active.Len())
	c.current = n
	c.peak = max(c.peak, n)
	if n > c.limit {
		c.events++
		if report := c.onOver; report != nil {
			c.onOver = nil
			report(Moment{Count: n, Interval: true, FromUs: x - c.hold, ToUs: x + c.hold, AtUs: x})
		}
	}
}

func (c *HeldSpans) publish() {
	c.pub.Store(&CheckResult{Peak: c.peak, Overshoot: max(0, c.peak-c.limit), OvershootEvent: c.events, Current: c.current, Unjudged: c.unjudged})
}

// Admit implements Checker: over the request's interval. The endpoint releases its own slots,
// within the promise (Release is Plain's).
func (c *HeldSpans) Admit(d evidence.Decision, kept func()) Outcome {
	return admitSpan(c.AdmitInterval, d, kept)
}

// Result implements Checker: the verdict so far, which lags the newest admit by lag.
func (c *HeldSpans) Result() CheckResult { return *c.pub.Load() }

// Finish implements Checker: every admit is in, so every pending span is settled.
func (c *HeldSpans) Finish() CheckResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 {
		c.settleNext()
	}
	c.publish()
	return *c.pub.Load()
}

// Early is how many admits were answered sooner than the promised hold after they were sent:
// the endpoint does not hold its slots that long, and those admits are no evidence.
func (c *HeldSpans) Early() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.early
}

// CaughtFrom implements Prober, as the witness's: limit+1 less the most spans that shared an
// instant. A phantom is a copy of one of the run's spans at that instant, no better placed than
// the run's own; a run that already overshot is caught from 1.
func (c *HeldSpans) CaughtFrom(maxK int64) (int64, bool) {
	c.mu.Lock()
	peak := c.peak
	c.mu.Unlock()
	k := max(1, c.limit+1-peak)
	return k, k <= maxK
}

// endHeap is a min-heap of span ends.
type endHeap []int64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *endHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

var _ Checker = (*HeldSpans)(nil)
