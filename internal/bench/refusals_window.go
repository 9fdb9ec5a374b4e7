package bench

import (
	"math"
	"sort"

	"github.com/limitctl/limitctl/internal/limiter"
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
	maxKept       int

	admits     []winAdmit
	folded     int64 // admits forgotten, each sent before every later refusal's reply
	foldedDone int64 // of those, the ones answered before every later refusal's X
	newest     int64
	blind      int64 // stamp: refusals whose window can reach an admit forgotten at or before it are not judged
	gaveUp     bool  // more admits than any correct limiter keeps in a window: no longer judged

	sent, done, earliest []int64 // scratch
}

type winAdmit struct{ sent, replied, stampLo, stampHi int64 }

func newWindowJudge(s judgeSpec) *windowJudge {
	j := &windowJudge{
		limit: s.limit, window: max(s.window, 1000), aligned: s.kind == limiter.FixedWindow && s.aligned && !s.server,
		ttl:    s.kind == limiter.FixedWindow,
		margin: 2*s.skew + s.horizon + 1_000_000, maxKept: int(16*s.limit) + 65536,
		blind: math.MinInt64, newest: math.MinInt64,
	}
	// A script compares times rounded to the unit it is given them in, on both sides.
	j.reach = j.window + int64(float64(j.window)*s.serverRate()) + 2*s.grain()
	return j
}

func (j *windowJudge) add(calls []judgedCall) {
	if j.gaveUp {
		return
	}
	for _, c := range calls {
		a := winAdmit{c.Sent, c.Replied, c.StampLo, c.StampHi}
		if c.Outcome == outUnknown {
			a.replied = forever
		}
		j.admits = append(j.admits, a)
		j.newest = max(j.newest, c.StampHi)
	}
	if len(j.admits) > j.maxKept {
		j.gaveUp, j.admits = true, nil
	}
}

// windowIndex is the epoch-aligned window a stamp (µs) falls in, as the contract computes it
// from the time in milliseconds.
func (j *windowJudge) windowIndex(stamp int64) int64 {
	return floorDiv(floorDiv(stamp, 1000), max(1, j.window/1000))
}

func (j *windowJudge) judge(ready []*rejectGroup, _ int64, verdict func(*rejectGroup, int64, float64)) {
	if j.gaveUp {
		return
	}
	if j.aligned {
		j.judgeAligned(ready, verdict)
		return
	}
	byStamp := j.admits // in place: their order means nothing elsewhere
	sort.Slice(byStamp, func(a, b int) bool { return byStamp[a].stampHi < byStamp[b].stampHi })
	if cap(j.earliest) < len(byStamp)+1 {
		j.earliest = make([]int64, len(byStamp)+1)
	}
	earliest := j.earliest[:len(byStamp)+1] // earliest[i]: the earliest sending among byStamp[i:]
	earliest[len(byStamp)] = forever
	for i := len(byStamp) - 1; i >= 0; i-- {
		earliest[i] = min(earliest[i+1], byStamp[i].sent)
	}
	j.sent, j.done = j.sent[:0], j.done[:0]
	for _, a := range j.admits {
		j.sent = append(j.sent, a.sent)
		if a.replied != forever {
			j.done = append(j.done, a.replied)
		}
	}
	sortInt64s(j.sent)
	sortInt64s(j.done)
	for _, g := range ready {
		threshold := g.stampLo - j.reach // an admit can be in the window when stamped after it
		if threshold < j.blind {
			continue
		}
		first := sort.Search(len(byStamp), func(i int) bool { return byStamp[i].stampHi > threshold })
		x := earliest[first]
		if j.ttl {
			x = min(x, g.sentMin-j.window-ttlSlack(j.window))
		}
		counted := j.folded + countAtMost(j.sent, g.repliedMax) - j.foldedDone - countBelow(j.done, x)
		counted = max(0, counted)
		if counted < j.limit {
			verdict(g, counted, nan)
		}
	}
}

func (j *windowJudge) judgeAligned(ready []*rejectGroup, verdict func(*rejectGroup, int64, float64)) {
	windows := map[int64][]int64{}
	for _, a := range j.admits {
		w := j.windowIndex(a.stampLo)
		windows[w] = append(windows[w], a.sent)
	}
	for _, sent := range windows {
		sortInt64s(sent)
	}
	for _, g := range ready {
		w := j.windowIndex(g.stampLo)
		if j.blind != math.MinInt64 && w <= j.windowIndex(j.blind) {
			continue
		}
		if counted := countAtMost(windows[w], g.repliedMax); counted < j.limit {
			verdict(g, counted, nan)
		}
	}
}

// settle forgets the admits no later refusal can count, once they are well behind the newest
// stamp (a later refusal stamped earlier still is not judged).
func (j *windowJudge) settle(floor int64) {
	if j.gaveUp || len(j.admits) == 0 {
		return
	}
	old := j.newest - j.margin - j.reach // stamped at or before this: behind every window judged from now on
	if j.aligned {
		kept := j.admits[:0]
		for _, a := range j.admits {
			if j.windowIndex(a.stampHi) < j.windowIndex(j.newest-j.margin) {
				j.blind = max(j.blind, a.stampHi)
				continue
			}
			kept = append(kept, a)
		}
		j.admits = kept
		return
	}
	// The earliest X of any later refusal: the earliest sending among admits that may still
	// qualify, and the earliest a later one can be sent; a TTL window reaches a window back.
	xFloor := floor
	if j.ttl {
		xFloor = floor - j.window - ttlSlack(j.window)
	}
	for _, a := range j.admits {
		if a.stampHi > old || a.sent >= floor {
			xFloor = min(xFloor, a.sent)
		}
	}
	kept := j.admits[:0]
	for _, a := range j.admits {
		if a.stampHi > old || a.sent >= floor {
			kept = append(kept, a)
			continue
		}
		j.blind = max(j.blind, a.stampHi) // no later refusal judged may have it qualify
		switch {
		case a.replied == forever: // may run at any time: it counts against every later refusal
			j.folded++
		case a.replied < xFloor:
			j.folded++
			j.foldedDone++
		default:
			kept = append(kept, a) // answered after a later X may be: still counts for some
		}
	}
	j.admits = kept
}
