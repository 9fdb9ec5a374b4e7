package overshoot

import (
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/tally"
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
//
// Anchored windows (UseAnchors), only where the contract says so (--window-start first-hit). The
// model above holds every correct fixed window whose alignment is unknown (SPEC section 11), since
// each keeps windows at least W apart, each holding at most the limit:
//   - epoch-aligned windows: back to back at multiples of W;
//   - a grid phased by its first hit and kept while the key lives: back to back from that hit, so
//     after an idle spell the first call lands anywhere inside a window that began before it;
//   - a window opened by the first call after the last one ended: the next starts W or more later;
//   - a window opened by a call, its start rounded down to a whole second, for W whole seconds:
//     the next is opened by a call at or after a_j + W, itself a whole second, so its rounded start
//     is too.
//
// It grows no looser than that: the same rounded window at W = 1.5s is no correct limiter (a
// window can end 0.5s early, so 2c admits fit in 1s), and the model proves it whenever the admits
// pin the windows down; where they do not, the power (CaughtFrom) says how much it could not see.
//
// A sharper model holds only the third family: a window begins where the call that opened it was
// sent. That opener is the first call that finds no window open, which a correct limiter admits
// (its count starts at 0, the cost is 1).
// That opener's stamp t_o is at most a_j + Λ = b_j + 2Λ (on the client's clock it is the anchor
// itself; a window ended by expiry is opened by a call stamped up to Λ after it; on the virtual
// clock TIME is at or after the stamp), and at least a_j - λ_o, λ_o how late the opener may have
// been (the limiter decided it by its stamp's time plus at most that). So window j holds, besides
// its judged admits, either a judged opener or one the evidence left out (an admit too late to
// judge, or a call that failed and may have admitted: NoteUnjudged, with its lateness bound, or
// the call timeout when unknown). In the stamp-ordered assignment the search uses, admits swap
// between windows; a window that gives away its opener in a swap receives a stamp from an earlier
// window, which is at most b_{j-1} + R - 1 <= b_j + 3Λ. An unjudged opener earlier than the
// window's first judged stamp t_f has t_o >= a_j - λ_o >= t_f - R + 1 + Λ - λ_o (the window holds
// t_f), so it is among the notes whose reach, t_o + λ_o + R - 1 - Λ, is at least t_f. So, with u
// the earliest such note at or before t_f: b_j >= min(t_f, u) - 3Λ. The bound never falls as t_f
// rises (a note joins only once t_f passes its stamp, and leaves once t_f passes its reach), so
// the least feasible k still gives the least start, and the search adds only
// max(..., min(t_f, u) - 3Λ) to it. It blames a grid or an epoch-aligned window, whose windows
// began before the calls that opened them for the key, so it judges only where the contract
// states first-hit windows (UseAnchors). Elsewhere the notes are still kept (NoteOpeners), so the
// power can say what the sharper model would have proven (CaughtFromAnchored), never judging by it.
// An unjudged stamp must be noted before any admit after it is settled; one noted later turns
// the anchored searches and the notes off for the rest of the run (their failures are then no
// evidence), as does a run whose calls it cannot all see (other processes sharing the keys, or a
// schedule's times: neither UseAnchors nor NoteOpeners is called).
type UnalignedChecker struct {
	Plain
	limit       int64
	windowMs    int64 // W
	rangeMs     int64 // R
	spacingMs   int64 // P
	lookbackMs  int64 // L: how late an unjudged opener may be
	log         *admitLog
	state       unalignedState // settled, guarded by log.mu
	capacityIdx int            // the search at the limit, in state.searches (and state.anchored)
	onOver      func(Moment)
	// anchors: the anchored searches run and judge (UseAnchors) and still hold (no unjudged
	// stamp came late); noting: the unjudged stamps are kept (UseAnchors or NoteOpeners) and
	// still complete. notes are those stamps, ascending, kept for re-judging (within budget).
	anchors, noting bool
	notes           []unjudgedNote
}

// unjudgedNote is a call that may have admitted unjudged: its stamp, and the latest first judged
// stamp of a window it may have opened (see the type's comment).
type unjudgedNote struct{ at, reach int64 }

// UseAnchors makes c judge with anchored windows too: the caller notes every call that may have
// admitted and is not judged here (NoteUnjudged), and no process but this one sends to the key.
func (c *UnalignedChecker) UseAnchors() {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	if c.log.started {
		return // too late: the searches so far had no notes
	}
	c.anchors, c.noting = true, true
	c.state.anchored = make([]windowSearch, len(c.state.searches))
	for i, w := range c.state.searches {
		c.state.anchored[i] = windowSearch{capacity: w.capacity}
	}
}

// NoteOpeners makes c keep every call the caller notes (NoteUnjudged) for CaughtFromAnchored,
// judging by plain windows alone. Like UseAnchors, no process but this one sends to the key.
func (c *UnalignedChecker) NoteOpeners() {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	if !c.log.started {
		c.noting = true
	}
}

// NoteUnjudged notes an admit too late to judge, or a call that failed, stamped nowMs and at most
// lateMs late (-1: unknown), where windows are anchored at their openers or their openers noted.
func (c *UnalignedChecker) NoteUnjudged(nowMs, lateMs int64) {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	if !c.noting {
		return
	}
	if c.log.started && nowMs <= c.log.settled {
		// An admit at or after it may have been settled without it: the anchored searches may
		// have bounded a window by a stamp later than its opener's.
		c.anchors, c.noting = false, false
		return
	}
	if c.log.history.budget == nil {
		c.log.history.budget = budgetOr(nil)
	}
	if !c.log.history.budget.take() {
		c.anchors, c.noting = false, false // a note that cannot be kept cannot be gone without
		return
	}
	if lateMs < 0 || lateMs > c.lookbackMs {
		lateMs = c.lookbackMs
	}
	n := unjudgedNote{at: nowMs, reach: nowMs + lateMs + c.rangeMs - 1 - (c.rangeMs-c.windowMs-1)/2}
	i := len(c.notes)
	for i > 0 && c.notes[i-1].at > nowMs {
		i--
	}
	c.notes = append(c.notes, unjudgedNote{})
	copy(c.notes[i+1:], c.notes[i:])
	c.notes[i] = n
}

// anchorFloor is the least start of a window whose first judged stamp is first: min(first, u) less
// 3Λ, u the earliest unjudged call that may be its opener (see the type's comment).
func (c *UnalignedChecker) anchorFloor(notes []unjudgedNote, first int64) int64 {
	lateMs := (c.rangeMs - c.windowMs - 1) / 2
	ref := first
	lo := first - c.rangeMs - c.lookbackMs // no note's reach is longer
	for i := sort.Search(len(notes), func(i int) bool { return notes[i].at >= lo }); i < len(notes) && notes[i].at < ref; i++ {
		if notes[i].reach >= first {
			ref = notes[i].at
			break
		}
	}
	return ref - 3*lateMs
}

// OnFirstOver implements Checker: the first set of admits no windows of a correct
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
	anchored []windowSearch // the same capacities, windows anchored at their openers (UseAnchors)
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
	noPrev bool  // S(k) = -inf: no window before
	first  int64 // t_{k+1}: the first stamp of a window that starts after admit k
}

// NewUnalignedChecker judges fixed windows of windowMs with a limit, admits up to lateMs late
// (Λ); horizonMs is how late an admit may arrive after a newer one.
func NewUnalignedChecker(limit, windowMs, lateMs, horizonMs int64) *UnalignedChecker {
	c := &UnalignedChecker{limit: limit, windowMs: windowMs, rangeMs: windowMs + 2*lateMs + 1, spacingMs: windowMs - lateMs,
		lookbackMs: horizonMs}
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
	c.state.add(c, ms, n, c.notesFor())
	if report := c.onOver; report != nil {
		for _, at := range c.verdictSearches(&c.state) {
			if at.failed > 0 {
				c.onOver = nil
				report(Moment{Count: at.failedAtIdx - at.failedFromIdx + 1, FromMs: at.failedFromMs, ToMs: ms})
				break
			}
		}
	}
}

// notesFor are the notes the anchored searches go by, nil while they do not run. Called under
// log.mu; the slice is the checker's own, changed by the next note.
func (c *UnalignedChecker) notesFor() []unjudgedNote {
	if !c.anchors {
		return nil
	}
	if c.notes == nil {
		return []unjudgedNote{}
	}
	return c.notes
}

// verdictSearches are the searches at the limit whose failures are evidence: the plain one, and
// the anchored one while it holds. Called under log.mu.
func (c *UnalignedChecker) verdictSearches(st *unalignedState) []*windowSearch {
	out := []*windowSearch{&st.searches[c.capacityIdx]}
	if c.anchors && len(st.anchored) > 0 {
		out = append(out, &st.anchored[c.capacityIdx])
	}
	return out
}

// add takes n admits stamped ms, the newest so far; notes are the unjudged stamps the anchored
// searches bound windows by (nil: they do not run).
func (st *unalignedState) add(c *UnalignedChecker, ms, n int64, notes []unjudgedNote) {
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
			st.searches[i].add(st.index, ms, first, c.rangeMs, c.spacingMs, nil)
		}
		if notes != nil {
			floor := func(t int64) int64 { return c.anchorFloor(notes, t) }
			for i := range st.anchored {
				st.anchored[i].add(st.index, ms, first, c.rangeMs, c.spacingMs, floor)
			}
		}
	}
}

// add runs the search for admit i stamped t, first the index of the earliest admit stamped at or
// after t - R + 1; floor, when set, is the least start of a window whose first stamp is its
// argument (anchored windows).
func (w *windowSearch) add(i, t, first, rangeMs, spacingMs int64, floor func(first int64) int64) {
	if !w.lastSet {
		w.setFromMs, w.setFromIdx = t, i
	}
	// F(i-1): can a window start at t_i after the window holding t_{i-1}?
	if !w.lastSet || w.lastS+spacingMs <= t {
		w.cands = append(w.cands, windowCand{k: i - 1, s: w.lastS, noPrev: !w.lastSet, first: t})
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
	if floor != nil {
		s = max(s, floor(best.first))
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
	out.searches, out.anchored = cloneSearches(st.searches), cloneSearches(st.anchored)
	return out
}

func cloneSearches(ws []windowSearch) []windowSearch {
	if ws == nil {
		return nil
	}
	out := make([]windowSearch, len(ws))
	for i, w := range ws {
		w.cands = append([]windowCand(nil), w.cands[w.head:]...)
		w.head = 0
		out[i] = w
	}
	return out
}

// result is the verdict of a state: the plain searches', raised by the anchored ones' while they
// hold.
func (c *UnalignedChecker) result(st *unalignedState) CheckResult {
	var res CheckResult
	for _, at := range c.verdictSearches(st) {
		res.OvershootEvent = max(res.OvershootEvent, at.failed)
	}
	searches := st.searches
	if c.anchors {
		searches = append(append([]windowSearch(nil), searches...), st.anchored...)
	}
	for _, w := range searches {
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
func (c *UnalignedChecker) Admit(d evidence.Decision, kept func()) Outcome {
	return admitStamped(c.log, d, kept)
}

// AdmitMs records an admit at nowMs.
func (c *UnalignedChecker) AdmitMs(nowMs int64) { c.log.add(nowMs) }

// Unjudged implements Checker: a call that may have opened a window (NoteUnjudged).
func (c *UnalignedChecker) Unjudged(d evidence.Decision) {
	lateMs := int64(-1)
	if d.LateUs >= 0 {
		lateMs = (d.LateUs + 999) / 1000
	}
	c.NoteUnjudged(d.AtMs, lateMs)
}

// ShareHistory implements Checker.
func (c *UnalignedChecker) ShareHistory(b *HistoryBudget) { c.log.history.budget = b }

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
			st.add(c, p.Ms, p.N, c.notesFor())
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
