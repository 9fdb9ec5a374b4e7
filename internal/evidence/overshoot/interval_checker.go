package overshoot

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// admitSpan judges an admit over its interval through admit (an interval checker's
// AdmitInterval): the limiter read its clock at some instant between the call being sent and
// its reply arriving, on the run's monotonic clock. Kept only once taken.
func admitSpan(admit func(sent, replied time.Duration) bool, d evidence.Decision, kept func()) Outcome {
	sent, replied := d.Span()
	if !admit(time.Duration(sent)*time.Microsecond, time.Duration(replied)*time.Microsecond) {
		return LeftOut
	}
	kept()
	return Judged
}

// SpanRule is a kind's rule over the calls' intervals (internal/evidence/kind/<name>): the spans
// an IntervalChecker judges, what a count of admits certainly inside one proves, and which admits
// a correct limiter could have made, for the power.
type SpanRule interface {
	// Spans are the spans judged, shortest first, for a limit (a bucket's burst) and a window of
	// windowUs (a bucket's time to refill its burst).
	Spans(limit, windowUs int64) []Span
	// Peak is what count admits certainly inside sp prove of one window (or the bucket): the
	// most admits some window must have held, or the most drawn beyond refill. It never falls
	// as count grows (IntervalChecker.CaughtFrom's early answer rests on it).
	Peak(sp Span, limit, count int64) int64
	// Allowed is the most admits a correct limiter could place certainly inside sp; 0 where that
	// is the limit itself (a single window).
	Allowed(sp Span, limit int64) int64
	// Thin is how many of each entry's admits (at µs, ascending) a correct limiter of limit and
	// windowUs could have made: the evidence it would have left, which the rule never blames.
	Thin(mids []tally.Count, limit, windowUs int64) []int64
}

// Span is one span an IntervalChecker judges: its length, and what its rule reads of it: the
// admits a correct limiter allows certainly inside it (windows) or its refill (a bucket), and the
// windows it splits into or can touch.
type Span struct {
	Us     int64
	Bound  float64
	Pieces int64
}

// SpanAllowance is how much a span of spanUs is taken shorter than its windows, or its refill
// longer: scripts round TIME to milliseconds, and the server's clock and the client's may run
// 0.1% apart.
func SpanAllowance(spanUs int64) int64 { return 1000 + spanUs/1000 }

// IntervalSpans is how many windows the sliding and fixed checks span at most: a longer span
// catches a smaller excess per window. A fixed window of unknown alignment is the reason for
// five: a span shorter than m windows may touch m+1 of them, so it proves an overshoot only past
// (m+1)/m of the limit, and a correct window's admits come in bursts at its start, which a span
// takes whole only where its calls' intervals fit. Over three windows a correct endpoint
// behind HTTP was proven to about +11 of 20 and now and then to no better than the limit (not
// judged, 1 run in 20 beside two busy loops); over five, +5 is the bound's share.
const IntervalSpans = 5

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
	Plain
	rule       SpanRule
	limit      int64 // windows: the limit; bucket: the burst
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

// OnFirstOver implements Checker: the admits certainly inside the first interval
// that held more than the rule allows.
func (c *IntervalChecker) OnFirstOver(report func(Moment)) {
	c.mu.Lock()
	c.onOver = report
	c.mu.Unlock()
}

type spanCheck struct {
	Span
	passed int64 // reply times <= the current x+span, counted from the start of the run
}

// NewIntervalChecker judges admits against rule with the given limit (burst for the bucket) and
// window (the bucket's refill time of a whole burst).
func NewIntervalChecker(rule SpanRule, limit int64, window time.Duration) *IntervalChecker {
	w := window.Microseconds()
	c := &IntervalChecker{rule: rule, limit: limit, windowUs: max(1, w),
		fresh: func() *IntervalChecker { return NewIntervalChecker(rule, limit, window) }}
	for _, sp := range rule.Spans(limit, c.windowUs) {
		c.checks = append(c.checks, spanCheck{Span: sp})
	}
	c.maxLatency = c.checks[0].Us
	c.lag = c.checks[len(c.checks)-1].Us + 200_000 // the widest span, and time for its replies to be recorded
	c.pub.Store(&CheckResult{})
	return c
}

// AdmitInterval records an admit sent and answered then (since the run began); false when it is
// left unjudged (too slow to be evidence, or later than the judging).
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
			if rUs <= c.frontier+c.checks[i].Us {
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
		y := x + ch.Us
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
// bucket), by the rule.
func (c *IntervalChecker) peakFor(ch *spanCheck, count int64) int64 {
	return c.rule.Peak(ch.Span, c.limit, count)
}

// allowedIn is the most admits a correct limiter could place certainly inside one of ch's spans.
func (c *IntervalChecker) allowedIn(ch *spanCheck) int64 { return c.rule.Allowed(ch.Span, c.limit) }

func (c *IntervalChecker) publish() {
	c.pub.Store(&CheckResult{Peak: c.peak, Overshoot: max(0, c.peak-c.limit), OvershootEvent: c.events, Current: c.current, Unjudged: c.unjudged})
}

// Admit implements Checker: over the call's interval.
func (c *IntervalChecker) Admit(d evidence.Decision, kept func()) Outcome {
	return admitSpan(c.AdmitInterval, d, kept)
}

// ShareHistory implements Checker.
func (c *IntervalChecker) ShareHistory(b *HistoryBudget) {
	c.mu.Lock()
	c.budget = b
	c.mu.Unlock()
}

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

// JudgeOnly keeps the checker to its rule's n shortest spans, and its lag to the widest's: the
// admits judged are the same, on fewer spans (sliding.TwoClocks says why).
func (c *IntervalChecker) JudgeOnly(n int) {
	c.checks = c.checks[:n]
	fresh := c.fresh
	c.fresh = func() *IntervalChecker { f := fresh(); f.JudgeOnly(n); return f }
}
