package overshoot

import (
	"math"
	"sort"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// A verdict states its power (SPEC section 10): the smallest overshoot this run's evidence would
// have proven. An exact verdict from evidence that could not have seen an overshoot is no
// verdict: a peak of 19 of 20 under a wide skew cannot tell a limit of 20 from one of 40.
//
// How it is measured. After the run each checker re-judges what it judged, as the same rule
// with the same allowances, after two changes:
//   - thinned: the admits are first cut down to what a correct limiter could have admitted
//     (greedily, in time order: at most the limit in any window; for the bucket, only the
//     admits a bucket of the same burst and rate had a token for). A run that already
//     overshot, unproven, has used up the room the rule's allowances leave; judging more on
//     top of it would overstate the power. Thinned, the admits are what a correct limiter under
//     this run's load and clocks would have left as evidence, which the rule never blames;
//   - then k phantom admits are added in every window that holds a judged admit, each a copy of
//     one of that window's judged admits (its stamp, or its call's interval), so a phantom is
//     judged exactly as an admit of that window was: no better placed than the run's own.
//
// The power is the smallest k for which the rule then proves an overshoot, for the weakest of
// three placements: all k on the window's first judged admit, all on its last, or spread over
// them in turn. (More phantoms only add evidence, so the smallest k is found by bisection.) It is
// what the verdict line says: an overshoot of k per window would have been proven here; one
// under it might not have been. For the concurrency witness a phantom is a request held beside
// the run's, at every moment: the witness counts exactly, so the power is how far the most
// requests it counted at once stayed below the limit, plus one.
//
// A window is the limiter's window (the bucket's: the time it refills a whole burst), counted
// from the epoch; the checkers' own windows (any alignment, any sliding start) need not be those.

// HistoryBudget bounds the entries (a millisecond that saw admits, or one call's interval) the
// checkers sharing it keep for re-judging, about 16 bytes each. Past it they keep no more, and
// the power is that of the run's first part: evidence that proved an overshoot there would have
// proven it in the whole run, so the power stated is never better than the run's.
type HistoryBudget struct{ left atomic.Int64 }

// NewHistoryBudget allows entries in all.
func NewHistoryBudget(entries int64) *HistoryBudget {
	b := &HistoryBudget{}
	b.left.Store(entries)
	return b
}

// DefaultHistoryEntries is a checker's own budget when none is shared with it: 64 MiB.
const DefaultHistoryEntries = 1 << 22

// take reserves one entry; false once the budget is spent.
func (b *HistoryBudget) take() bool { return b.left.Add(-1) >= 0 }

// budgetOr is b, or a budget of the checker's own.
func budgetOr(b *HistoryBudget) *HistoryBudget {
	if b != nil {
		return b
	}
	return NewHistoryBudget(DefaultHistoryEntries)
}

// smallestProven is the least k in [1, maxK] with proven(k), for proven monotone in k.
func smallestProven(maxK int64, proven func(k int64) bool) (int64, bool) {
	lo, hi := int64(0), int64(1) // proven(lo) is false (no phantom proves nothing new: thinned)
	for !proven(hi) {
		if hi >= maxK {
			return 0, false
		}
		lo, hi = hi, min(2*hi, maxK)
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if proven(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// Placement is where a window's k phantoms go among its n judged admits (in time order): how
// many go on admit i.
type Placement func(k int64, i, n int) int64

// placements are the three: all on the first, all on the last, spread over them in turn.
var placements = []Placement{
	func(k int64, i, _ int) int64 { return k * b2i(i == 0) },   // all on the first
	func(k int64, i, n int) int64 { return k * b2i(i == n-1) }, // all on the last
	func(k int64, i, n int) int64 { // spread over them in turn
		return k/int64(n) + b2i(int64(i) < k%int64(n))
	},
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Weakest is the power over every placement of the phantoms: for each, the least k in [1, maxK]
// with provenAt(place, k) (monotone in k, found by bisection), and the largest of those; ok is
// false when some placement proves nothing up to maxK. A kind's power (CaughtFrom) is this search
// over its own rule, its admits thinned to a correct limiter's first.
func Weakest(maxK int64, provenAt func(place Placement, k int64) bool) (int64, bool) {
	worst := int64(0)
	for _, place := range placements {
		k, ok := smallestProven(maxK, func(k int64) bool { return provenAt(place, k) })
		if !ok {
			return 0, false
		}
		worst = max(worst, k)
	}
	return worst, true
}

// withPhantoms is counts (ascending ms) with k phantoms in each window of windowMs that holds
// one, placed by place among the window's milliseconds.
func withPhantoms(counts []tally.Count, windowMs, k int64, place Placement) []tally.Count {
	out := make([]tally.Count, len(counts))
	copy(out, counts)
	for start := 0; start < len(out); {
		w := tally.FloorDiv(out[start].Ms, windowMs)
		end := start
		for end < len(out) && tally.FloorDiv(out[end].Ms, windowMs) == w {
			end++
		}
		for i := start; i < end; i++ {
			out[i].N += place(k, i-start, end-start)
		}
		start = end
	}
	return out
}

// ThinSliding is how many of each entry's admits (ascending positions) a correct sliding
// window, and so a fixed one of any alignment, could have admitted: in time order, each admit
// that leaves at most limit in any window of window units ending at it.
func ThinSliding(counts []tally.Count, limit, window int64) []int64 {
	kept := make([]int64, len(counts))
	var recent tally.Queue
	inWindow := int64(0)
	for i, c := range counts {
		for recent.Len() > 0 && recent.Front().Ms <= c.Ms-window {
			inWindow -= recent.PopFront().N
		}
		if kept[i] = min(c.N, max(0, limit-inWindow)); kept[i] > 0 {
			recent.Add(c.Ms, kept[i])
			inWindow += kept[i]
		}
	}
	return kept
}

// ThinAligned is how many of each entry's admits a correct epoch-aligned fixed window could have
// admitted: at most limit in each window of window units from the epoch, in time order.
func ThinAligned(counts []tally.Count, limit, window int64) []int64 {
	kept := make([]int64, len(counts))
	index, used := int64(math.MinInt64), int64(0)
	for i, c := range counts {
		if w := tally.FloorDiv(c.Ms, window); w != index {
			index, used = w, 0
		}
		kept[i] = max(0, min(c.N, limit-used))
		used += kept[i]
	}
	return kept
}

// ThinBucket is how many of each entry's admits a bucket of burst tokens refilled at rate per
// unit (full at the start) had a whole token for, in time order: in any interval of T units at
// most burst + rate*T of them.
func ThinBucket(counts []tally.Count, burst int64, rate float64) []int64 {
	kept := make([]int64, len(counts))
	tokens := float64(burst)
	for i, c := range counts {
		if i > 0 {
			tokens = min(float64(burst), tokens+rate*float64(c.Ms-counts[i-1].Ms))
		}
		kept[i] = max(0, min(c.N, int64(math.Floor(tokens+1e-9))))
		tokens -= float64(kept[i])
	}
	return kept
}

// keptCounts are counts cut to kept, without the entries left empty.
func keptCounts(counts []tally.Count, kept []int64) []tally.Count {
	var out []tally.Count
	for i, c := range counts {
		if kept[i] > 0 {
			out = append(out, tally.Count{Ms: c.Ms, N: kept[i]})
		}
	}
	return out
}

// history is what an admitLog settled, kept for re-judging: (ms, n) in ms order.
type history struct {
	counts []tally.Count
	budget *HistoryBudget
}

func (h *history) keep(c tally.Count) {
	if n := len(h.counts); n > 0 && h.counts[n-1].Ms == c.Ms {
		h.counts[n-1].N += c.N
		return
	}
	if h.budget == nil {
		h.budget = budgetOr(nil)
	}
	if h.budget.take() {
		h.counts = append(h.counts, c)
	}
}

// CaughtFrom implements Checker: limit+1 less the most requests it counted at once.
func (w *Witness) CaughtFrom(maxK int64) (int64, bool) {
	k := max(1, w.limit+1-w.peak.Load())
	return k, k <= maxK
}

// CaughtFrom implements Checker.
func (c *SlidingChecker) CaughtFrom(maxK int64) (int64, bool) {
	c.log.mu.Lock()
	counts := c.log.soFar()
	c.log.mu.Unlock()
	thin := ThinSliding
	if c.aligned {
		thin = ThinAligned
	}
	thinned := keptCounts(counts, thin(counts, c.limit, c.window))
	return Weakest(maxK, func(place Placement, k int64) bool {
		fresh := &SlidingChecker{limit: c.limit, window: c.window, aligned: c.aligned, windowIndex: math.MinInt64}
		for _, e := range withPhantoms(thinned, c.window, k, place) {
			fresh.settle(e.Ms, e.N)
		}
		return fresh.events > 0
	})
}

// CaughtFrom implements Checker: the power of the windows the verdict judged by (anchored at
// their openers too, where the contract says so).
func (c *UnalignedChecker) CaughtFrom(maxK int64) (int64, bool) {
	c.log.mu.Lock()
	notes := c.notesFor()
	c.log.mu.Unlock()
	return c.caughtFrom(maxK, notes)
}

// CaughtFromAnchored implements Checker.
func (c *UnalignedChecker) CaughtFromAnchored(maxK int64) (int64, bool) {
	c.log.mu.Lock()
	var notes []unjudgedNote
	if c.noting {
		notes = append([]unjudgedNote{}, c.notes...)
	}
	c.log.mu.Unlock()
	if notes == nil {
		return 0, false
	}
	return c.caughtFrom(maxK, notes)
}

// caughtFrom is the power of the plain windows, and of the anchored ones by notes unless nil.
func (c *UnalignedChecker) caughtFrom(maxK int64, notes []unjudgedNote) (int64, bool) {
	c.log.mu.Lock()
	counts := c.log.soFar()
	if notes != nil {
		notes = append([]unjudgedNote{}, notes...)
	}
	c.log.mu.Unlock()
	thinned := keptCounts(counts, ThinSliding(counts, c.limit, c.windowMs))
	return Weakest(maxK, func(place Placement, k int64) bool {
		fresh := &UnalignedChecker{limit: c.limit, windowMs: c.windowMs, rangeMs: c.rangeMs, spacingMs: c.spacingMs,
			lookbackMs: c.lookbackMs, anchors: notes != nil}
		fresh.state.searches = []windowSearch{{capacity: c.limit}} // the search at the limit decides
		if notes != nil {
			fresh.state.anchored = []windowSearch{{capacity: c.limit}}
		}
		for _, e := range withPhantoms(thinned, c.windowMs, k, place) {
			fresh.state.add(fresh, e.Ms, e.N, notes)
		}
		return fresh.state.searches[0].failed > 0 || notes != nil && fresh.state.anchored[0].failed > 0
	})
}

// CaughtFrom implements Checker; the window is the time the bucket refills a whole burst.
func (c *BucketChecker) CaughtFrom(maxK int64) (int64, bool) {
	c.log.mu.Lock()
	counts := c.log.soFar()
	c.log.mu.Unlock()
	if c.rate <= 0 {
		return 0, false
	}
	window := max(1, int64(math.Ceil(float64(c.burst)/c.rate)))
	thinned := keptCounts(counts, ThinBucket(counts, c.burst, c.rate))
	return Weakest(maxK, func(place Placement, k int64) bool {
		var s bucketState
		for _, e := range withPhantoms(thinned, window, k, place) {
			s.step(c, e.Ms, e.N)
		}
		return s.events > 0
	})
}

// CaughtFrom implements Checker: the strongest tier's power (a phantom of a tier joins the wider
// ones too, which only adds evidence there).
func (b *lateBucket) CaughtFrom(maxK int64) (int64, bool) {
	best, found := int64(0), false
	for _, c := range b.checkers {
		if k, ok := c.CaughtFrom(maxK); ok && (!found || k < best) {
			best, found = k, true
		}
	}
	return best, found
}

// CaughtFrom implements Checker: this process's evidence, or the joint evidence of every process,
// whichever is stronger.
func (c *sharedChecker) CaughtFrom(maxK int64) (int64, bool) {
	best, found := int64(0), false
	for _, p := range []Checker{c.k.local, c.k.joint} {
		if k, ok := p.CaughtFrom(maxK); ok && (!found || k < best) {
			best, found = k, true
		}
	}
	return best, found
}

// CaughtFrom implements Checker: the calls' intervals, thinned by their midpoints (a correct
// limiter decided each somewhere in its interval), each phantom a copy of a judged call's.
func (c *IntervalChecker) CaughtFrom(maxK int64) (int64, bool) {
	thinned := c.thinned()
	if !c.couldProve(int64(len(thinned)), maxK) {
		return 0, false
	}
	return c.searchPower(thinned, maxK)
}

// thinned are the judged calls' intervals a correct limiter could have left: thinned by
// midpoint, as the rule counts a call only in an interval that certainly holds it, and such an
// interval holds its midpoint, so calls whose midpoints keep the limiter's rule are never
// blamed.
func (c *IntervalChecker) thinned() []span {
	c.mu.Lock()
	spans := append([]span(nil), c.spans...)
	c.mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i].mid() < spans[j].mid() })
	mids := make([]tally.Count, len(spans))
	for i, s := range spans {
		mids[i] = tally.Count{Ms: s.mid(), N: 1}
	}
	kept := c.rule.Thin(mids, c.limit, c.windowUs)
	var thinned []span
	for i, s := range spans {
		if kept[i] > 0 {
			thinned = append(thinned, s)
		}
	}
	return thinned
}

// searchPower is the fewest phantoms a window (up to maxK) by which the thinned calls, replayed
// with them, prove an overshoot under every placement.
func (c *IntervalChecker) searchPower(thinned []span, maxK int64) (int64, bool) {
	sort.Slice(thinned, func(i, j int) bool { return thinned[i].sent < thinned[j].sent })
	return Weakest(maxK, func(place Placement, k int64) bool {
		fresh := c.fresh()
		fresh.noHistory = true
		for start := 0; start < len(thinned); {
			w := tally.FloorDiv(thinned[start].sent, c.windowUs)
			end := start
			for end < len(thinned) && tally.FloorDiv(thinned[end].sent, c.windowUs) == w {
				end++
			}
			for i := start; i < end; i++ {
				s := thinned[i]
				for n := place(k, i-start, end-start) + 1; n > 0; n-- {
					fresh.AdmitInterval(time.Duration(s.sent)*time.Microsecond, time.Duration(s.replied)*time.Microsecond)
				}
			}
			start = end
		}
		fresh.Finish()
		return fresh.events > 0
	})
}

// span is one judged call's interval, µs.
type span struct{ sent, replied int64 }

func (s span) mid() int64 { return s.sent + (s.replied-s.sent)/2 }

// couldProve says whether n judged admits with up to maxK phantoms in each window could prove
// anything in any span; when it says no, the search of CaughtFrom finds nothing at any k, and
// is spared (a limit far above the load: every request an admit, replayed a dozen times over).
// A span [x, x+Us] certainly holds only admits sent inside it, whose windows (by sending, as
// the phantoms are placed) are at most Us/window + 2, each with at most k phantoms: it holds
// at most n + k*(Us/window + 2), and Peak never falls as the count grows.
func (c *IntervalChecker) couldProve(n, maxK int64) bool {
	for _, ch := range c.checks {
		if c.peakFor(&ch, n+maxK*(ch.Us/c.windowUs+2)) > c.limit {
			return true
		}
	}
	return false
}
