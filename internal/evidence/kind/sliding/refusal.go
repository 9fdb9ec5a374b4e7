package sliding

import (
	"math"
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// windowJudge judges a fixed or sliding window limiter's refusals. A correct window limiter
// refuses k only when limit admits that ran before k count against k's window; the rules below
// bound, from above, what any correct one can count. Fewer than limit: k is a false reject.
//
// Sliding window. Correct limiters count in one of two ways:
//   - by stamp: a log counts the admits stamped after t_k - W that ran before k (the shipped
//     script counts (now - W, +inf), so an admit stamped later that ran first counts too);
//   - by order: a list of the newest admits (alisaifee/limits' moving window) refuses when the
//     limit-th newest admit to have run is stamped within the window, so every admit that ran
//     after that one counts, whatever its own stamp.
//
// Let X be the earliest sending of any admit whose stamp can be within k's window (stamped
// after t_k - W, widened by the rounding of the time unit and, on the server's clock, its rate).
// Both ways count at most the admits j that can have run at or after X and before k:
// replied_j >= X and sent_j <= replied_k. By stamp, every counted admit qualifies itself, so it
// was sent, and so ran, no earlier than X. By order, the counted admits ran after one that
// qualifies, which ran after it was sent, so no earlier than X. An admit of unknown outcome may
// run at any time after it was sent: it always can have run after X.
//
// Fixed window, epoch-aligned (the contract names the window, or a shipped strategy): the
// window's own counter counts only the admits of k's window (the same window index of their
// stamps) that ran before k.
//
// Fixed window, alignment unknown: the window is anchored in the limiter's state at a stamp (a
// reset when now >= anchor + W, so it counts what ran after the resetting admit, which is
// stamped less than W before t_k or later: the sliding bound), named from stamps with an offset
// (every counted admit qualifies: the sliding bound), or opened by a first hit and ended by a
// TTL on the server's clock (it counts what ran since the key was created, less than W of server
// time before k ran, so what was answered after sent_k - W less the server clock's rate and a
// millisecond). X is the earlier of the two.
type windowJudge struct {
	limit, window int64 // window in µs
	reach         int64 // µs: an admit stamped more than this before k cannot be in k's window
	aligned, ttl  bool
	margin        int64 // µs: how far behind the newest stamp a later refusal's stamp can be

	// The admits, kept per millisecond as the rule reads them, each rounded the way that can
	// only count more: by the latest stamp each can have (rounded up; the earliest sending among
	// those of each millisecond), by their sending (rounded down), and, answered ones, by their
	// reply (rounded up). Their memory follows the milliseconds of the window and the margin,
	// however many admits each held.
	stamps     tally.Queue            // ms of the stamp -> the earliest sending (µs)
	sent, done tally.Queue            // ms -> admits
	folded     int64                  // admits forgotten from sent: each was sent before every later refusal's reply
	foldedDone int64                  // answered admits forgotten from done: each answered before every later refusal's X
	windows    map[int64]*tally.Queue // aligned: window index -> admits by the ms of their sending
	newest     int64
	blind      int64 // stamp: refusals whose window can reach an admit forgotten at or before it are not judged

	sentCum, doneCum, earliest []int64 // scratch
}

// NewRule is a window limiter's refusal rule: a sliding window's, or a fixed window's (fixed: its
// model's), epoch-aligned where s says so, else of any alignment, whose bound is the sliding one
// widened by a window ended by its key's expiry.
func NewRule(s refusal.Spec, fixed bool) refusal.Rule {
	j := &windowJudge{
		limit: s.Limit, window: max(s.Window, 1000), aligned: fixed && s.Aligned && !s.Server && !s.Monotone,
		ttl: fixed, margin: 2*s.Skew + s.Horizon + 1_000_000,
		windows: map[int64]*tally.Queue{}, blind: math.MinInt64, newest: math.MinInt64,
	}
	// A script compares times rounded to the unit it is given them in, on both sides.
	j.reach = j.window + int64(float64(j.window)*s.ServerRate()) + 2*s.Grain()
	return j
}

// ceilMs is the millisecond at or after µs t.
func ceilMs(t int64) int64 { return tally.FloorDiv(t+999, 1000) }

func (j *windowJudge) Add(calls []evidence.Decision) {
	for _, c := range calls {
		j.newest = max(j.newest, c.ClockHiUs)
		if j.aligned {
			w := j.windowIndex(c.ClockLoUs)
			q := j.windows[w]
			if q == nil {
				q = &tally.Queue{}
				j.windows[w] = q
			}
			q.Add(tally.FloorDiv(c.SentUs, 1000), 1)
			continue
		}
		j.stamps.KeepMin(ceilMs(c.ClockHiUs), c.SentUs)
		j.sent.Add(tally.FloorDiv(c.SentUs, 1000), 1)
		if c.Outcome != evidence.Unknown { // unknown: may run at any time, so never answered "before X"
			j.done.Add(ceilMs(c.RepliedUs), 1)
		}
	}
}

// windowIndex is the epoch-aligned window a stamp (µs) falls in, as the contract computes it
// from the time in milliseconds.
func (j *windowJudge) windowIndex(stamp int64) int64 {
	return tally.FloorDiv(tally.FloorDiv(stamp, 1000), max(1, j.window/1000))
}

// cumulative is the running totals of q's counts.
func cumulative(q *tally.Queue, into []int64) []int64 {
	into = into[:0]
	total := int64(0)
	for i := 0; i < q.Len(); i++ {
		total += q.At(i).N
		into = append(into, total)
	}
	return into
}

// countThrough is how many of q's admits lie in milliseconds for which in(ms) holds, in(ms)
// being true up to some millisecond and false after it.
func countThrough(q *tally.Queue, cum []int64, in func(ms int64) bool) int64 {
	n := sort.Search(q.Len(), func(i int) bool { return !in(q.At(i).Ms) })
	if n == 0 {
		return 0
	}
	return cum[n-1]
}

func (j *windowJudge) Judge(ready []*refusal.Group, _ int64, verdict refusal.Verdict) {
	if j.aligned {
		j.judgeAligned(ready, verdict)
		return
	}
	j.sentCum = cumulative(&j.sent, j.sentCum)
	j.doneCum = cumulative(&j.done, j.doneCum)
	n := j.stamps.Len()
	if cap(j.earliest) < n+1 {
		j.earliest = make([]int64, n+1)
	}
	earliest := j.earliest[:n+1] // earliest[i]: the earliest sending among stamps[i:]
	earliest[n] = refusal.Forever
	for i := n - 1; i >= 0; i-- {
		earliest[i] = min(earliest[i+1], j.stamps.At(i).N)
	}
	for _, g := range ready {
		threshold := g.StampLo - j.reach // an admit can be in the window when stamped after it
		if threshold < j.blind {
			continue
		}
		first := sort.Search(n, func(i int) bool { return j.stamps.At(i).Ms*1000 > threshold })
		x := earliest[first]
		if j.ttl {
			x = min(x, g.SentMin-j.window-refusal.TTLSlack(j.window))
		}
		replied := tally.FloorDiv(g.RepliedMax, 1000)
		counted := j.folded + countThrough(&j.sent, j.sentCum, func(ms int64) bool { return ms <= replied }) -
			j.foldedDone - countThrough(&j.done, j.doneCum, func(ms int64) bool { return ms*1000 < x })
		if counted = max(0, counted); counted < j.limit {
			verdict(g, counted, math.NaN(), -1)
		}
	}
}

func (j *windowJudge) judgeAligned(ready []*refusal.Group, verdict refusal.Verdict) {
	for _, g := range ready {
		w := j.windowIndex(g.StampLo)
		if j.blind != math.MinInt64 && w <= j.windowIndex(j.blind) {
			continue
		}
		counted := int64(0)
		if q := j.windows[w]; q != nil {
			replied := tally.FloorDiv(g.RepliedMax, 1000)
			for i := 0; i < q.Len() && q.At(i).Ms <= replied; i++ {
				counted += q.At(i).N
			}
		}
		if counted < j.limit {
			verdict(g, counted, math.NaN(), -1)
		}
	}
}

// settle forgets what no later refusal can count, once it is well behind the newest stamp (a
// later refusal stamped earlier still is not judged).
// AddRefused implements Rule: a refusal counts in no window.
func (j *windowJudge) AddRefused(*refusal.Group) {}

func (j *windowJudge) Settle(floor int64) {
	if j.newest == math.MinInt64 {
		return
	}
	if j.aligned {
		for w := range j.windows {
			if w < j.windowIndex(j.newest-j.margin) {
				delete(j.windows, w)
				j.blind = max(j.blind, (w+1)*max(1, j.window/1000)*1000-1) // the window's last µs
			}
		}
		return
	}
	old := j.newest - j.margin - j.reach // stamped at or before this: behind every window judged from now on
	for j.stamps.Len() > 0 && j.stamps.Front().Ms*1000 <= old {
		j.blind = max(j.blind, j.stamps.PopFront().Ms*1000) // no later refusal judged may have them qualify
	}
	// The earliest X of any later refusal: the earliest sending among admits that may still
	// qualify, and the earliest a later one can be sent; a TTL window reaches a window back.
	xFloor := floor
	if j.ttl {
		xFloor = floor - j.window - refusal.TTLSlack(j.window)
	}
	for i := 0; i < j.stamps.Len(); i++ {
		xFloor = min(xFloor, j.stamps.At(i).N)
	}
	for j.sent.Len() > 0 && (j.sent.Front().Ms+1)*1000 <= floor {
		j.folded += j.sent.PopFront().N // sent before every later refusal's reply
	}
	for j.done.Len() > 0 && j.done.Front().Ms*1000 < xFloor {
		j.foldedDone += j.done.PopFront().N // answered before every later refusal's X
	}
}
