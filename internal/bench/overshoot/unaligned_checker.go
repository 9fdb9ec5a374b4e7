package overshoot

import (
	"math"

	"github.com/limitctl/limitctl/internal/bench/tally"
)

// UnalignedChecker judges a fixed window whose alignment is unknown (a custom script's calls
// stamped by the client or virtual clock): the contract does not name the window by the epoch
// ({window_index} and the like), so the limiter may open a window at any instant, for instance
// at the first hit after the last window ended (SET key 0 EX d NX, or an anchor kept in the
// state). A window opened by the first hit is not an
// overshoot, so the aligned check (at most limit admits per multiple of the window) would blame a
// correct limiter; and the pigeonhole bound (an interval of k windows touches at most k+1 of
// them) catches only a limiter more than twice too generous. This checker reports exactly what
// the admits prove: that no sequence of windows a correct limiter could have used holds them all
// with at most limit each.
//
// The model. A correct limiter's windows, in the order it opens them, are anchored at a_1 < a_2
// < ... at the time of the call that opened each. With the stamps exactly the times the limiter
// used, window j holds calls stamped in [a_j, a_j + W) and a_{j+1} >= a_j + W. Two things widen
// that, by at most Λ, the longest an admit judged here may be late (λ_i = how far behind the most
// advanced worker clock its stamp can be when its call reached Redis: the skew between the two
// clocks plus its own round trip plus its stamp's rounding; admits later than Λ are left out,
// which can only remove evidence):
//   - reordering: a call stamped before a_j that reaches Redis after window j opened counts in
//     window j (a_j was stamped by a worker clock at most λ_i ahead of call i's), so window j holds
//     stamps in [a_j - Λ, a_j + W);
//   - a window ended by its key's expiry (on the server's clock, not the stamps): it ends W after
//     the anchor's write, when a call stamped by a clock up to Λ behind may still reach it, and the
//     next anchor may be stamped up to Λ early: stamps in [a_j - Λ, a_j + W + Λ), a_{j+1} >= a_j + W - Λ.
//
// So, with b_j = a_j - Λ and in whole milliseconds (one more for a script told finer time than
// the stamps' milliseconds): window j holds the stamps t with b_j <= t <= b_j + R - 1, R = W + 2Λ + 1,
// and b_{j+1} >= b_j + P, P = W - Λ. Every admit lies in some window, every window holds at most
// the limit c. The admits are judged feasible if such windows exist, else overshoot is proven.
//
// Deciding feasibility. Sort the admits t_1 <= ... <= t_n. Some feasible assignment keeps stamp
// order (windows' ranges have increasing starts and ends, so two admits assigned against their
// order can be swapped: each still lies in the other's window), so the windows take consecutive
// groups. A group k+1..i fits a window starting at b if b + P-spacing allows it (b >= S + P, S the
// previous window's start), b <= t_{k+1} and b >= t_i - R + 1; the best b is the least,
// b = max(S + P, t_i - R + 1), because a later start only constrains the next window more. Let
// S(i) be the least start of the window holding t_i over all feasible partitions of t_1..t_i
// (S(0) = -inf). Then S(i) = max(S(k*) + P, t_i - R + 1) for the least k* in [i - c, i - 1] with
//
//	F(k):  S(k) + P <= t_{k+1}        (window k+1.. can start after the previous one), and
//	       t_{k+1} >= t_i - R + 1     (the group spans less than R),
//
// because S is nondecreasing in k (a partition of 1..k+1 restricted to 1..k is one of 1..k, with
// a start no later), so the least feasible k gives the least start. F(k) depends on k alone, and
// the range condition bounds k from below by an index that only grows with i: the candidates are
// a queue, and each admit costs O(1) amortised. No feasible k means no correct limiter admits
// t_1..t_i: an overshoot event. The search then starts afresh after t_i, so the events count
// disjoint sets of admits, each of which needed a window over the limit: no more events than
// admits over the limit.
//
// How far over: the same search with capacities above the limit (limit, +1, +3, +7, ... up to
// four times it) says how many a window must have held at least (peak = one more than the largest
// capacity proven too small); below the limit (limit-1 to limit-8, then -16, -32, ...) it says how
// near the limit a window certainly came.
type UnalignedChecker struct {
	limit       int64
	windowMs    int64 // W
	rangeMs     int64 // R
	spacingMs   int64 // P
	log         *admitLog
	state       unalignedState // settled, guarded by log.mu
	capacityIdx int            // the search at the limit, in state.searches
	onOver      func(Moment)
}

// OnFirstOver implements Reporter: the first set of admits no windows of a correct
// limiter can hold, from the admit the search started at to the one that made it fail.
func (c *UnalignedChecker) OnFirstOver(report func(Moment)) {
	c.log.mu.Lock()
	c.onOver = report
	c.log.mu.Unlock()
}

type unalignedState struct {
	index    int64       // admits settled so far (t_index is the newest)
	recent   tally.Queue // admits per ms of the last R ms, for the range condition
	recentAt int64       // index of the first admit in recent
	searches []windowSearch
	newest   int64
}

// windowSearch is the search at one capacity.
type windowSearch struct {
	capacity int64
	cands    []windowCand // k with F(k), increasing; a slice used as a queue
	head     int
	lastS    int64 // S of the newest admit
	lastSet  bool  // false at the start of a search: S(previous) = -inf
	failed   int64 // disjoint sets of admits proven infeasible
	// setFromMs and setFromIdx are the first admit of the set being searched; failedFrom* and
	// failedAtIdx the first and last admit of the first set proven infeasible (for the trace).
	setFromMs, setFromIdx                    int64
	failedFromMs, failedFromIdx, failedAtIdx int64
}

type windowCand struct {
	k      int64
	s      int64
	noPrev bool // S(k) = -inf: no window before
}

// NewUnalignedChecker judges fixed windows of windowMs with a limit, admits up to lateMs late
// (Λ); horizonMs is how late an admit may arrive after a newer one.
func NewUnalignedChecker(limit, windowMs, lateMs, horizonMs int64) *UnalignedChecker {
	c := &UnalignedChecker{limit: limit, windowMs: windowMs, rangeMs: windowMs + 2*lateMs + 1, spacingMs: windowMs - lateMs}
	var caps []int64
	// Below the limit one by one near it (the peak a contended correct limiter is proven to have
	// reached), then halving.
	for d := int64(1); limit-d >= 0; {
		caps = append(caps, limit-d)
		if d < 8 {
			d++
		} else {
			d *= 2
		}
	}
	c.capacityIdx = len(caps)
	for d := int64(0); limit+d <= 4*max(limit, 1); d = 2*d + 1 {
		caps = append(caps, limit+d)
	}
	for _, capacity := range caps {
		c.state.searches = append(c.state.searches, windowSearch{capacity: capacity})
	}
	c.log = newAdmitLog(horizonMs, c.settle)
	return c
}

func (c *UnalignedChecker) settle(ms, n int64) {
	at := &c.state.searches[c.capacityIdx]
	before := at.failed
	c.state.add(c, ms, n)
	if report := c.onOver; report != nil && before == 0 && at.failed > 0 {
		c.onOver = nil
		report(Moment{Count: at.failedAtIdx - at.failedFromIdx + 1, FromMs: at.failedFromMs, ToMs: ms})
	}
}

// add takes n admits stamped ms, the newest so far.
func (st *unalignedState) add(c *UnalignedChecker, ms, n int64) {
	st.newest = ms
	for st.recent.Len() > 0 && st.recent.Front().Ms < ms-c.rangeMs+1 {
		st.recentAt += st.recent.PopFront().N
	}
	if st.recent.Len() == 0 {
		st.recentAt = st.index + 1
	}
	st.recent.Add(ms, n)
	for j := int64(0); j < n; j++ {
		st.index++
		// k must be >= first - 1, first the earliest admit within R of this one.
		first := st.recentAt
		for i := range st.searches {
			st.searches[i].add(st.index, ms, first, c.rangeMs, c.spacingMs)
		}
	}
}

// add runs the search for admit i stamped t, first the index of the earliest admit stamped at or
// after t - R + 1.
func (w *windowSearch) add(i, t, first, rangeMs, spacingMs int64) {
	if !w.lastSet {
		w.setFromMs, w.setFromIdx = t, i
	}
	// F(i-1): can a window start at t_i after the window holding t_{i-1}?
	if !w.lastSet || w.lastS+spacingMs <= t {
		w.cands = append(w.cands, windowCand{k: i - 1, s: w.lastS, noPrev: !w.lastSet})
	}
	lo := max(i-w.capacity, first-1)
	for w.head < len(w.cands) && w.cands[w.head].k < lo {
		w.head++
	}
	if w.head == len(w.cands) {
		// No correct limiter admits these: start afresh after t_i.
		if w.failed == 0 {
			w.failedFromMs, w.failedFromIdx, w.failedAtIdx = w.setFromMs, w.setFromIdx, i
		}
		w.failed++
		w.cands, w.head, w.lastSet = w.cands[:0], 0, false
		return
	}
	best := w.cands[w.head]
	s := t - rangeMs + 1
	if !best.noPrev {
		s = max(s, best.s+spacingMs)
	}
	w.lastS, w.lastSet = s, true
	if w.head > 64 && w.head*2 > len(w.cands) {
		w.cands = append(w.cands[:0], w.cands[w.head:]...)
		w.head = 0
	}
}

func (st unalignedState) clone() unalignedState {
	out := st
	out.recent = st.recent.Clone()
	out.searches = make([]windowSearch, len(st.searches))
	for i, w := range st.searches {
		w.cands = append([]windowCand(nil), w.cands[w.head:]...)
		w.head = 0
		out.searches[i] = w
	}
	return out
}

// result is the verdict of a state.
func (c *UnalignedChecker) result(st *unalignedState) CheckResult {
	res := CheckResult{OvershootEvent: st.searches[c.capacityIdx].failed}
	for _, w := range st.searches {
		if w.failed > 0 {
			res.Peak = max(res.Peak, w.capacity+1)
		}
	}
	res.Overshoot = max(0, res.Peak-c.limit)
	// Current: the admits of the last window-long stretch, as the dashboard shows a window.
	for i := 0; i < st.recent.Len(); i++ {
		if e := st.recent.At(i); e.Ms > st.newest-c.windowMs {
			res.Current += e.N
		}
	}
	return res
}

// Admit implements Checker.
func (c *UnalignedChecker) Admit(nowMs int64) { c.log.add(nowMs) }

// Release implements Checker.
func (c *UnalignedChecker) Release() {}

// Result implements Checker: the settled verdict plus the milliseconds still open to late
// admits, searched on a copy so a live view does not lag by the horizon.
func (c *UnalignedChecker) Result() CheckResult {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	st := &c.state
	if c.log.pending.Len() > 0 {
		cp := c.state.clone()
		st = &cp
		for i := 0; i < c.log.pending.Len(); i++ {
			p := c.log.pending.At(i)
			st.add(c, p.Ms, p.N)
		}
	}
	res := c.result(st)
	res.Unjudged = c.log.late
	return res
}

// Finish implements Checker.
func (c *UnalignedChecker) Finish() CheckResult {
	c.log.finish()
	return c.Result()
}

// unalignedLateMs is Λ for the unaligned fixed window's evidence: the skew between any two
// worker clocks, a millisecond of rounding, and a round-trip budget (a hundredth of the window,
// at least 10ms). An admit later than that is left out of this evidence.
func unalignedLateMs(l Limits) int64 {
	budget := max(10*1000, l.Window.Microseconds()/100)
	return int64(math.Ceil(float64(2*l.Skew.Microseconds()+1000+budget) / 1000))
}
