package slidingcounter

import (
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
)

// item is a judged admit: the limiter's clock when it decided lies in [lo, hi] (widened by the
// grain, and for a timed decision by the clock's drift since its chunk began), and it ran in
// [ranLo, ranHi] (µs).
type item struct{ lo, hi, ranLo, ranHi int64 }

// chunk is admits judged under one phase of the windows. slack is how far ahead of the instant a
// call ran its limiter's clock may read, at most: a counter of the window beginning at s was first
// written no earlier than s - slack.
type chunk struct {
	items []item // by ranLo
	slack int64
}

// driftWindows is how many windows a chunk of timed decisions spans at most: the server's clock
// may run 0.1% faster or slower than the run's, so each decision's clock is widened by 0.1% of its
// distance from the chunk's start (16 windows: at most 1.6% of a window).
const driftWindows = 16

// prepare turns the admits into chunks, and counts the admits left out: those whose run-time is
// looser than a tenth of the window, and all of them when the clocks' allowances leave no window
// to judge in.
//
// Chunks. Epoch-aligned windows are one chunk. At any alignment a member keeps its phase while its
// state lives (its counters are read by the window indices its phase gives), and may take a new one
// once it is gone (families in doc.go), so the admits are cut where one may have begun: a member
// re-phases only after no admit ran for G = 2W - 0.2% - 1ms - Λ - 2·slack (two windows, measured on
// a key's TTL or on its own clock, which reads up to Λ + 2·slack apart from the run's; Λ is the
// widest [ranLo, ranHi] judged). If A ran before the spell and B after, then in ranLo order A comes
// first (an a in A ran G before any b in B, and each ran within Λ of its ranLo), and the gap
// between A's latest ranHi and B's earliest ranLo is at least G - 2Λ: a cut there separates every
// such A from its B. Cutting where no member re-phased only loses evidence. Timed decisions are
// cut again every driftWindows windows, so the drift allowance stays small.
func (s Spec) prepare(ds []decision) (chunks []chunk, unjudged int64) {
	w, g := s.windowUs(), s.grainUs()
	var admits []decision
	for _, d := range ds {
		if d.Outcome != evidence.Admitted {
			continue
		}
		if d.RanHiUs-d.RanLoUs > s.maxRunUs() {
			unjudged++
			continue
		}
		admits = append(admits, d)
	}
	slack := g
	if s.Timing == Intervals {
		slack += driftWindows*w/1000 + w/1000 + 1 // the widest drift allowance in a chunk, below
	}
	if len(admits) == 0 {
		return nil, unjudged
	}
	if slack > w/2 {
		return nil, unjudged + int64(len(admits)) // a clock this coarse leaves no window to judge in
	}
	sort.SliceStable(admits, func(i, j int) bool { return admits[i].RanLoUs < admits[j].RanLoUs })
	if s.Align == EpochAligned {
		ch := chunk{slack: slack}
		for _, d := range admits {
			ch.items = append(ch.items, item{d.ClockLoUs - g, d.ClockHiUs + g, d.RanLoUs, d.RanHiUs})
		}
		return []chunk{ch}, unjudged
	}
	widest := int64(0)
	for _, d := range admits {
		widest = max(widest, d.RanHiUs-d.RanLoUs)
	}
	cutGap := 2*w - 2*w/1000 - 1000 - 3*widest - 2*slack
	var cur *chunk
	start, ranHi := int64(0), int64(0)
	for _, d := range admits {
		if cur == nil || d.RanLoUs-ranHi >= cutGap || s.Timing == Intervals && d.RanLoUs-start > driftWindows*w {
			chunks = append(chunks, chunk{slack: slack})
			cur = &chunks[len(chunks)-1]
			start, ranHi = d.RanLoUs, d.RanHiUs
		}
		ranHi = max(ranHi, d.RanHiUs)
		it := item{d.ClockLoUs - g, d.ClockHiUs + g, d.RanLoUs, d.RanHiUs}
		if s.Timing == Intervals {
			// The server's clock, offset to agree with the run's at the chunk's start, is within
			// 0.1% of the time since then of the run's.
			drift := ceilDiv(d.ClockHiUs-start, 1000)
			it.lo -= drift
			it.hi += drift
		}
		cur.items = append(cur.items, it)
	}
	return chunks, unjudged
}

// ceilDiv is ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
