package overshoot

import (
	"slices"
	"time"
)

// An IntervalChecker judges a start x only once a reply later than x plus its widest span has
// been seen (its lag, five windows and more), so that every admit certainly inside one of x's
// spans is in before x is judged, and once. Until then its starts are judged provisionally, on
// the admits recorded so far, for the views that watch the run (the dashboard, the plain
// progress lines) and for the engine deciding whether the run has its evidence yet.
//
// Why a provisional judgment stands. At a pending start x, a span [x, x+span] is counted with
// the admits recorded so far that were sent at or after x and answered by x+span: every one of
// them certainly fell inside it (IntervalChecker's rule). When x is judged for good, the count
// is of the same admits and of any recorded since (an admit is never taken back, and one sent
// before the frontier, which would be left out then, was never pending), so it is at least the
// provisional one, and the rule's bound on a span does not change: whatever the provisional
// count proves of x, the final judgment proves too. The peak and the overshoot shown live are
// therefore never more than the run's summary states, and they are there within a tick of the
// admits behind them rather than a lag later.

// liveEvery bounds how often the provisional judgment is made again: it sweeps every pending
// admit, so it is paced to the views' ticks, not to the admits.
const liveEvery = 100 * time.Millisecond

// liveJudgment is the last provisional judgment of the pending starts.
type liveJudgment struct {
	at     time.Time
	stale  bool // admits were recorded since
	result CheckResult
	// scratch reused between sweeps
	replies []int64
	counts  []int64
}

// liveResult is the provisional judgment of the pending starts (Peak, OvershootEvent: how many
// of them are over, Current: the most admits certainly inside a window-long span among the
// starts of the newest window), made again when admits came since and liveEvery has passed.
// Call with c.mu held.
func (c *IntervalChecker) liveResult(now time.Time) CheckResult {
	if c.live.stale && now.Sub(c.live.at) >= liveEvery {
		c.live.result = c.judgePending()
		c.live.at, c.live.stale = now, false
	}
	return c.live.result
}

// judgePending judges every pending start as judgeNext would, on the pending admits alone:
// counted from the latest start down, each start's admits (sent at or after it) are added to a
// Fenwick tree over their reply times, where the count answered by x+span is one prefix sum.
func (c *IntervalChecker) judgePending() CheckResult {
	n := len(c.pending)
	var r CheckResult
	if n == 0 {
		return r
	}
	replies := append(c.live.replies[:0], make([]int64, n)...)
	for i, p := range c.pending {
		replies[i] = p.replied
	}
	slices.Sort(replies)
	c.live.replies = replies
	over := make([]bool, n) // by the index of a start's last admit: some span proves it over
	newest := c.pending[n-1].sent
	for ci := range c.checks {
		ch := &c.checks[ci]
		tree := fenwick(c.live.counts[:0], n)
		for i := n - 1; i >= 0; {
			x, at := c.pending[i].sent, i
			for ; i >= 0 && c.pending[i].sent == x; i-- {
				tree.add(rank(replies, c.pending[i].replied))
			}
			count := tree.sum(upperRank(replies, x+ch.Us))
			p := c.peakFor(ch, count)
			r.Peak = max(r.Peak, p)
			if p > c.limit {
				over[at] = true // one event a start, whichever spans prove it, as judgeNext counts
			}
			if ci == 0 && x+c.windowUs > newest {
				r.Current = max(r.Current, count)
			}
		}
		c.live.counts = tree
	}
	for _, o := range over {
		if o {
			r.OvershootEvent++
		}
	}
	return r
}

// fenwickTree counts values by rank (1-based inside).
type fenwickTree []int64

// fenwick is an empty tree over n ranks, in buf's memory where it is large enough.
func fenwick(buf []int64, n int) fenwickTree {
	if cap(buf) < n+1 {
		buf = make([]int64, n+1)
	}
	buf = buf[:n+1]
	clear(buf)
	return buf
}

// add counts one value of rank i (0-based).
func (t fenwickTree) add(i int) {
	for i++; i < len(t); i += i & -i {
		t[i]++
	}
}

// sum is how many values have a rank below k.
func (t fenwickTree) sum(k int) int64 {
	var s int64
	for ; k > 0; k -= k & -k {
		s += t[k]
	}
	return s
}

// rank is the position of v in sorted (its first, when repeated: the tree counts each
// occurrence at the same rank, which sums alike).
func rank(sorted []int64, v int64) int {
	i, _ := slices.BinarySearch(sorted, v)
	return i
}

// upperRank is how many of sorted are at most v.
func upperRank(sorted []int64, v int64) int {
	i, _ := slices.BinarySearch(sorted, v+1)
	return i
}

// insertBySent adds s to spans sorted by sent time; calls return in about the order they were
// sent, so it is nearly always the last.
func insertBySent(spans []span, s span) []span {
	spans = append(spans, s)
	i := len(spans) - 1
	for i > 0 && spans[i-1].sent > s.sent {
		spans[i] = spans[i-1]
		i--
	}
	spans[i] = s
	return spans
}
