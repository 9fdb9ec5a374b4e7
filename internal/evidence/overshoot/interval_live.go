package overshoot

import (
	"cmp"
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

// liveShare bounds the sweeps' share of a core: the next sweep waits at least liveShare times as
// long as the last one took. A busy endpoint's lag holds some hundred thousand admits, which one
// sweep takes milliseconds over; at liveEvery each admit was swept some forty times, a tenth of
// the client's CPU (hammer --http, make bench-hammer ONLY=http). The views still see an
// overshoot within a few of their ticks; what is judged for good does not wait on this.
const liveShare = 20

// liveJudgment is the last provisional judgment of the pending starts.
type liveJudgment struct {
	at     time.Time
	stale  bool          // admits were recorded since
	took   time.Duration // how long the last sweep took
	result CheckResult
	// scratch reused between sweeps
	byReply    []replyRank
	overStarts []int64 // the sent times of the starts the last sweep found over, ascending
	ranks      []int32
	counts     []int64
}

// liveResult is the provisional judgment of the pending starts (Peak, OvershootEvent: how many
// of them are over, Current: the most admits certainly inside a window-long span among the
// starts of the newest window), made again when admits came since and liveEvery has passed.
// Call with c.mu held.
func (c *IntervalChecker) liveResult(now time.Time) CheckResult {
	if c.live.stale && now.Sub(c.live.at) >= max(liveEvery, liveShare*c.live.took) {
		began := time.Now()
		c.live.result = c.judgePending()
		c.live.at, c.live.stale, c.live.took = now, false, time.Since(began)
	}
	r := c.live.result
	// The starts judged for good since the sweep are counted by the checker now (what the sweep
	// proved of one, its final judgment proves too): of the starts the sweep found over, only
	// those still pending are the live view's, or a sweep older than a tick would count them twice.
	over := c.live.overStarts
	if c.started {
		first, _ := slices.BinarySearch(over, c.frontier+1) // the first sent after the frontier
		over = over[first:]
	}
	r.OvershootEvent = int64(len(over))
	return r
}

// judgePending judges every pending start as judgeNext would, on the pending admits alone:
// counted from the latest start down, each start's admits (sent at or after it) are added to a
// Fenwick tree over their reply times, where the count answered by x+span is one prefix sum.
//
// Its cost is one sort of the pending admits by reply a sweep, and per span a tree update per
// admit and a prefix sum per start: each admit's place among the replies is found once, by that
// sort (the i-th reply in order is at rank i; equal replies take neighbouring ranks, and a
// prefix of the ranks holds exactly the replies up to a bound either way), and the prefix
// answered by x+span is found by a pointer walking down the sorted replies as x walks down, not
// by a search of its own. A sweep over a busy endpoint's lag of admits is the run's largest
// periodic cost (hammer --http), so it does no more than that.
func (c *IntervalChecker) judgePending() CheckResult {
	n := len(c.pending)
	var r CheckResult
	if n == 0 {
		return r
	}
	byReply := c.live.byReply[:0]
	for i, p := range c.pending {
		byReply = append(byReply, replyRank{replied: p.replied, admit: int32(i)})
	}
	slices.SortFunc(byReply, func(a, b replyRank) int { return cmp.Compare(a.replied, b.replied) })
	ranks := slices.Grow(c.live.ranks[:0], n)[:n]
	for k, b := range byReply {
		ranks[b.admit] = int32(k)
	}
	c.live.byReply, c.live.ranks = byReply, ranks
	over := make([]bool, n) // by the index of a start's last admit: some span proves it over
	newest := c.pending[n-1].sent
	for ci := range c.checks {
		ch := &c.checks[ci]
		tree := fenwick(c.live.counts[:0], n)
		answered := n // how many replies are at most x+span, for the x at hand (non-increasing)
		for i := n - 1; i >= 0; {
			x, at := c.pending[i].sent, i
			for ; i >= 0 && c.pending[i].sent == x; i-- {
				tree.add(int(ranks[i]))
			}
			for answered > 0 && byReply[answered-1].replied > x+ch.Us {
				answered--
			}
			count := tree.sum(answered)
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
	overStarts := c.live.overStarts[:0]
	for at, o := range over {
		if o {
			r.OvershootEvent++
			overStarts = append(overStarts, c.pending[at].sent) // ascending, as the pending are
		}
	}
	c.live.overStarts = overStarts
	return r
}

// replyRank is a pending admit's reply time and its index among the pending admits.
type replyRank struct {
	replied int64
	admit   int32
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
