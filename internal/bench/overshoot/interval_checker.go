package overshoot

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

// IntervalAdmitter is a checker that judges admits by when they could have been decided: the
// script read the server's clock (TIME) at some instant between the call being sent and its
// reply arriving, on the client's monotonic clock.
type IntervalAdmitter interface {
	// AdmitInterval records an admit sent and answered then; false when it is left unjudged
	// (too slow to be evidence, or later than the judging).
	AdmitInterval(sent, replied time.Duration) bool
}

// IntervalInvariant is the limiter rule an IntervalChecker holds admits to.
type IntervalInvariant int

const (
	// SlidingInvariant: at most limit admits in any window-long interval.
	SlidingInvariant IntervalInvariant = iota
	// FixedInvariant: at most limit admits in each window, windows disjoint and window-long,
	// whatever their alignment (epoch-aligned, or anchored at a first hit as SET NX EX does).
	FixedInvariant
	// BucketInvariant: at most burst + rate*T admits in any interval of length T.
	BucketInvariant
)

// intervalSpans is how many windows the sliding and fixed checks span at most: a longer span
// catches a smaller excess per window. A fixed window of unknown alignment is the reason for
// five: a span shorter than m windows may touch m+1 of them, so it proves an overshoot only past
// (m+1)/m of the limit, and a correct window's admits come in bursts at its start, which a span
// takes whole only where its calls' intervals fit. Over three windows a correct endpoint
// behind HTTP was proven to about +11 of 20 and now and then to no better than the limit (not
// judged, 1 run in 20 beside two busy loops); over five, +5 is the bound's share.
const intervalSpans = 5

// IntervalChecker reports overshoot only when more admits than the rule allows fall certainly
// inside one interval: an admit sent at s and replied at r was decided at some t in [s, r], so a
// set of admits certainly fits in [x, y] only when every one was sent at or after x and replied
// at or before y. Among such sets it finds, for each span, the most admits certainly inside
// one span-long interval (sweeping x over the sent times) and compares with the rule's bound.
//
// Two allowances keep it sound for a correct limiter: a span is shortened by 1 ms (scripts
// round TIME to milliseconds) plus 0.1% (the server's clock and the client's may run at
// slightly different rates), and an admit whose call took longer than the shortest span is
// left unjudged (its time is too uncertain to be evidence).
type IntervalChecker struct {
	invariant  IntervalInvariant
	limit      int64   // windows: the limit; bucket: the burst
	ratePerUs  float64 // bucket
	checks     []spanCheck
	maxLatency int64 // µs
	lag        int64 // µs: x is judged once a reply newer than x+lag was seen

	mu       sync.Mutex
	pending  []span  // admits whose start is not yet judged, sorted by sent time
	replied  []int64 // reply times not yet passed by every check, sorted
	dropped  int64   // reply times removed from the front of replied
	popped   int64   // admits judged as a start (their sent time is below the next x)
	frontier int64   // sent time of the last judged x; an admit sent earlier is too late
	started  bool
	newest   int64
	unjudged int64
	peak     int64
	events   int64
	current  int64 // admits certainly inside the last judged window-long span
	pub      atomic.Pointer[CheckResult]
	onOver   func(Moment)

	// spans are the judged calls' intervals, for re-judging with phantoms (power.go), within
	// budget; fresh builds an empty checker of the same rule; windowUs is the rule's window.
	spans     []span
	budget    *HistoryBudget
	noHistory bool
	fresh     func() *IntervalChecker
	windowUs  int64

	live     liveJudgment // the starts not yet judged, judged on the admits so far (Result)
	timeline timeline     // what each judged start proved of one window, at its time
}

// OnFirstOver implements Reporter: the admits certainly inside the first interval
// that held more than the rule allows.
func (c *IntervalChecker) OnFirstOver(report func(Moment)) {
	c.mu.Lock()
	c.onOver = report
	c.mu.Unlock()
}

type spanCheck struct {
	span   int64   // µs
	bound  float64 // admits allowed in span (sliding, fixed); refill in span (bucket)
	pieces int64   // sliding: windows the span splits into; fixed: windows it can touch
	passed int64   // reply times <= the current x+span, counted from the start of the run
}

// NewIntervalChecker judges admits against inv with the given limit (burst for the bucket),
// window (the bucket's refill time of a whole burst) and refill rate per second (bucket).
func NewIntervalChecker(inv IntervalInvariant, limit int64, window time.Duration, ratePerSec float64) *IntervalChecker {
	w := window.Microseconds()
	c := &IntervalChecker{invariant: inv, limit: limit, ratePerUs: ratePerSec / 1e6, windowUs: max(1, w),
		fresh: func() *IntervalChecker { return NewIntervalChecker(inv, limit, window, ratePerSec) }}
	allowance := func(span int64) int64 { return 1000 + span/1000 }
	switch inv {
	case BucketInvariant:
		for _, f := range []float64{0.125, 0.25, 0.5, 1, 2} {
			span := int64(f * float64(w))
			c.checks = append(c.checks, spanCheck{span: span, bound: c.ratePerUs * float64(span+allowance(span))})
		}
	default:
		for m := int64(1); m <= intervalSpans; m++ {
			span := m*w - allowance(m*w)
			pieces := m
			if inv == FixedInvariant {
				pieces = m + 1 // an interval shorter than m windows touches at most m+1 of them
			}
			c.checks = append(c.checks, spanCheck{span: span, bound: float64(pieces * limit), pieces: pieces})
		}
	}
	c.maxLatency = c.checks[0].span
	c.lag = c.checks[len(c.checks)-1].span + 200_000 // the widest span, and time for its replies to be recorded
	c.pub.Store(&CheckResult{})
	return c
}

// AdmitInterval implements IntervalAdmitter.
func (c *IntervalChecker) AdmitInterval(sent, replied time.Duration) bool {
	s, r := sent.Microseconds(), (replied+time.Microsecond-1)/time.Microsecond // r rounded up
	rUs := int64(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.maxLatency <= 0 || rUs-s > c.maxLatency || (c.started && s < c.frontier) {
		c.unjudged++
		c.publish()
		return false
	}
	c.pending = insertBySent(c.pending, span{s, rUs})
	c.replied = insertSorted(c.replied, rUs)
	c.live.stale = true
	if !c.noHistory {
		if c.budget == nil {
			c.budget = budgetOr(nil)
		}
		if c.budget.take() {
			c.spans = append(c.spans, span{s, rUs})
		}
	}
	if c.started {
		for i := range c.checks {
			if rUs <= c.frontier+c.checks[i].span {
				c.checks[i].passed++ // behind this check's pointer: keep its count exact
			}
		}
	}
	c.newest = max(c.newest, rUs)
	for len(c.pending) > 0 && c.pending[0].sent+c.lag < c.newest {
		c.judgeNext()
	}
	return true
}

// insertSorted adds v to a nearly sorted slice: calls return in about the order they were sent.
func insertSorted(xs []int64, v int64) []int64 {
	xs = append(xs, v)
	i := len(xs) - 1
	for i > 0 && xs[i-1] > v {
		xs[i] = xs[i-1]
		i--
	}
	xs[i] = v
	return xs
}

// judgeNext takes the earliest pending sent time as x and counts, for each span, the admits
// certainly inside [x, x+span]: replied by x+span, minus those sent before x (every one of
// which replied by then, as no admit slower than the shortest span is kept).
func (c *IntervalChecker) judgeNext() {
	x := c.pending[0].sent
	c.started, c.frontier = true, x
	over := false
	proved := int64(0) // the most admits one window certainly held, by any span from x
	minPassed := int64(math.MaxInt64)
	for i := range c.checks {
		ch := &c.checks[i]
		y := x + ch.span
		for idx := ch.passed - c.dropped; idx < int64(len(c.replied)) && c.replied[idx] <= y; idx++ {
			ch.passed++
		}
		minPassed = min(minPassed, ch.passed)
		count := ch.passed - c.popped
		if i == 0 {
			c.current = count
		}
		p := c.peakFor(ch, count)
		c.peak, proved = max(c.peak, p), max(proved, p)
		if p > c.limit && c.onOver != nil {
			report := c.onOver
			c.onOver = nil
			report(Moment{Count: count, Interval: true, FromUs: x, ToUs: y, Allowed: c.allowedIn(ch)})
		}
		over = over || p > c.limit
	}
	if over {
		c.events++
	}
	c.timeline.note(x, proved)
	n := 0
	for n < len(c.pending) && c.pending[n].sent == x {
		n++
	}
	c.pending = c.pending[n:]
	c.popped += int64(n)
	if drop := minPassed - c.dropped; drop > 0 {
		c.replied = c.replied[drop:]
		c.dropped += drop
	}
	c.publish()
}

// peakFor is what count admits certainly inside one span prove about a single window (or the
// bucket): the most admits some window must have held, or the most drawn beyond refill.
func (c *IntervalChecker) peakFor(ch *spanCheck, count int64) int64 {
	switch c.invariant {
	case BucketInvariant:
		return int64(math.Floor(float64(count) - ch.bound + 1e-9))
	case FixedInvariant:
		return (count + ch.pieces - 1) / ch.pieces // pigeonhole over the windows it touches
	default:
		if ch.pieces == 1 {
			return count
		}
		if excess := count - ch.pieces*c.limit; excess > 0 {
			return c.limit + (excess+ch.pieces-1)/ch.pieces // one of the pieces held this many
		}
		return 0
	}
}

// allowedIn is the most admits a correct limiter could place certainly inside one of ch's
// spans; 0 for a single window, whose bound is the limit.
func (c *IntervalChecker) allowedIn(ch *spanCheck) int64 {
	switch {
	case c.invariant == BucketInvariant:
		return c.limit + int64(math.Floor(ch.bound+1e-9))
	case ch.pieces > 1:
		return ch.pieces * c.limit
	}
	return 0
}

func (c *IntervalChecker) publish() {
	c.pub.Store(&CheckResult{Peak: c.peak, Overshoot: max(0, c.peak-c.limit), OvershootEvent: c.events, Current: c.current, Unjudged: c.unjudged})
}

// Admit implements Checker for callers that know only one time; it is a zero-width interval.
func (c *IntervalChecker) Admit(nowMs int64) {
	t := time.Duration(nowMs) * time.Millisecond
	c.AdmitInterval(t, t)
}

// Release implements Checker.
func (c *IntervalChecker) Release() {}

// Result implements Checker: the verdict so far. The judging of each start lags the newest admit
// by the widest span, so the starts not yet judged are judged provisionally on the admits
// recorded so far (interval_live.go): what they prove stands, and Finish only adds to it.
func (c *IntervalChecker) Result() CheckResult {
	judged := *c.pub.Load()
	c.mu.Lock()
	live, pending := c.liveResult(time.Now()), len(c.pending) > 0
	c.mu.Unlock()
	judged.Peak = max(judged.Peak, live.Peak)
	judged.Overshoot = max(0, judged.Peak-c.limit)
	judged.OvershootEvent += live.OvershootEvent
	if pending {
		judged.Current = live.Current
	}
	return judged
}

// Finish implements Checker: every admit is in, so every pending start is judged.
func (c *IntervalChecker) Finish() CheckResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 {
		c.judgeNext()
	}
	c.publish()
	return *c.pub.Load()
}

// TwoClockSliding is the sliding window's checker over admits judged on two clocks at once: the
// virtual clock's TIME and the real clock its TTLs run on (clock_evidence.go). It checks one
// window-long span only: a longer span's proof splits it into window-long pieces of one clock,
// and an admit whose TIME is in one piece may have run in the next, so m pieces of the span no
// longer bound it to m limits (the admits, in the order they ran, climb both clocks at once and
// can cross 2m-1 pieces of the two).
func TwoClockSliding(l Limits) *IntervalChecker {
	c := NewIntervalChecker(SlidingInvariant, l.Limit, l.Window, 0)
	c.checks = c.checks[:1]
	c.fresh = func() *IntervalChecker { return TwoClockSliding(l) }
	return c
}

// IntervalFor is the engine's checker for a window or bucket limiter on the server's
// clock; the token bucket refills its burst (Limit) once per Window.
func IntervalFor(l Limits) *IntervalChecker {
	switch evidence := l.Evidence; evidence {
	case limiter.FixedWindowEvidence:
		return NewIntervalChecker(FixedInvariant, l.Limit, l.Window, 0)
	case limiter.SlidingWindowEvidence:
		return NewIntervalChecker(SlidingInvariant, l.Limit, l.Window, 0)
	case limiter.BucketEvidence:
		return NewIntervalChecker(BucketInvariant, l.Limit, time.Duration(float64(l.Limit)/l.Rate*float64(time.Second)), l.Rate)
	default:
		panic(fmt.Sprintf("bench: no interval checker for evidence %d", evidence))
	}
}
