package slidingcounter

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// Result is the overshoot evidence of one key's decisions.
type Result struct {
	// Proven: no correct member (any rounding, any phase the contract allows) admits them all.
	Proven bool
	// Peak is the least limit a most permissive member of the same window could have had and
	// admitted them all (at most 4×limit+1, for "at least that"): at or below the limit when
	// nothing is proven, the limit the run certainly reached; Overshoot is Peak - limit, or 0.
	Peak, Overshoot int64
	// Events: the stretches proven over: epoch windows, or at any alignment chunks between idle
	// spells whose every phase was ruled out.
	Events int64
	// First is what proved the first of them; nil when nothing is proven.
	First *First
	// Unjudged: admits left out, their run-time looser than a tenth of the window, or their clocks'
	// allowances wider than half of it.
	Unjudged int64
}

// check judges the admits among ds (decision.Outcome Admitted; refusals and calls of unknown
// outcome are no evidence of an admit) against s's promise: an overshoot is proven only where
// even the most permissive member, under every phase the contract allows, would have refused one
// of them. s must be valid (Spec.Validate).
func check(s Spec, ds []decision) Result {
	chunks, unjudged := s.prepare(ds)
	j := s.judge(chunks)
	res := Result{Unjudged: unjudged}
	events, first := j.verdict(s.Limit)
	if events > 0 {
		res.Proven, res.Events, res.First = true, events, first
	}
	res.Peak = j.peak(s.Limit)
	res.Overshoot = max(0, res.Peak-s.Limit)
	return res
}

// judge holds, for each chunk, the pairs of windows the rule reads: every cell of window starts
// over which the admits certainly in a window, and those certainly in it or the one before, stay
// the same.
type judge struct {
	spec        Spec
	w, ttl      int64
	epoch       bool
	chunks      [][]cell
	slack       []int64
	byRan, byHi []item // threshold's scratch, reused
}

// cell is a set of window starts s over which the admits certainly in [s, s+W) (cur) and those
// certainly in [s-W, s+W) but not certainly in the first (prev) stay the same: on the doubled line
// (2u is the start u, 2u+1 the starts strictly between u and u+1, all in µs), [fromD, toD].
type cell struct {
	fromD, toD int64
	cur, prev  []item
}

func (s Spec) judge(chunks []chunk) *judge {
	j := &judge{spec: s, w: s.windowUs(), ttl: s.ttlUs(), epoch: s.Align == EpochAligned}
	for _, ch := range chunks {
		j.chunks = append(j.chunks, j.cells(ch))
		j.slack = append(j.slack, ch.slack)
	}
	return j
}

// cells lists the chunk's cells that hold an admit certainly in the later window. An admit is
// certainly in [s, s+W) for s in (hi-W, lo], and certainly in [s-W, s+W) for s in (hi-W, lo+W]:
// between consecutive breakpoints (hi-W, lo, lo+W of every admit) nothing changes, and each such
// stretch (β, β'] is decided at its end. Epoch-aligned windows are the points s = k·W.
func (j *judge) cells(ch chunk) []cell {
	byLo := append([]item(nil), ch.items...)
	sort.Slice(byLo, func(a, b int) bool { return byLo[a].lo < byLo[b].lo })
	at := func(s int64) (cur, prev []item) {
		first := sort.Search(len(byLo), func(i int) bool { return byLo[i].lo >= s-j.w })
		for _, it := range byLo[first:] {
			if it.lo >= s+j.w {
				break
			}
			switch {
			case it.hi >= s+j.w:
			case it.lo >= s:
				cur = append(cur, it)
			default:
				prev = append(prev, it)
			}
		}
		return cur, prev
	}
	var out []cell
	if j.epoch {
		seen := map[int64]bool{}
		for _, it := range byLo {
			s := floorDiv(it.lo, j.w) * j.w
			if seen[s] {
				continue
			}
			seen[s] = true
			if cur, prev := at(s); len(cur) > 0 {
				out = append(out, cell{fromD: 2 * s, toD: 2 * s, cur: cur, prev: prev})
			}
		}
		return out
	}
	var points []int64
	for _, it := range byLo {
		points = append(points, it.hi-j.w, it.lo, it.lo+j.w)
	}
	sort.Slice(points, func(a, b int) bool { return points[a] < points[b] })
	for i := 1; i < len(points); i++ {
		if points[i] == points[i-1] {
			continue
		}
		if cur, prev := at(points[i]); len(cur) > 0 {
			out = append(out, cell{fromD: 2*points[i-1] + 1, toD: 2 * points[i], cur: cur, prev: prev})
		}
	}
	return out
}

// proof is a set of admits that, for window starts from d on (doubled line), no member admits:
// admitted of them in the later window by the time the last ran, whose clock read at most at,
// and previous ran before all of those, in the earlier window or the later.
type proof struct {
	d                  int64
	admitted, previous int64
	at                 int64
}

const minD = math.MinInt64 / 4

// threshold is the least window start on the doubled line from which cur and prev prove an
// overshoot against limit; ok false when they prove none.
//
// The rule. Let S be the admits of cur whose run began at or after a and whose clock read at most
// b, and z the one of them that ran last. Every other admit of S ran before z, in z's window: a
// correct member's count c when it decided z was at least |S|-1, plus the admits of cur that ran
// before a (ranHi < a), each certainly counted in z's window (C). The admits of prev that ran before
// a (P) were each counted either in z's window (as 1) or in the one before (as p's, weighed by
// 1-f <= 1): at least P·(1-f). And z's fraction f into its window is at most (b - s)/W. So the
// most permissive member (weight taken exactly, or floored: the same test, c + p·(1-f) < L, for
// whole c and L) admitted z only if
//
//	|S| - 1 + C + P·(1 - (b-s)/W) < L,
//
// and an overshoot is proven for every s with |S| - 1 + C + P·(W - b + s)/W >= L: s >= b - W +
// W·R/P, R = L + 1 - |S| - C (every s when R <= 0). The P term needs the earlier window's counter
// still alive when z ran: first written at or after s - W - slack, it lives at least ttl, so it is
// alive while z's latest run, at most the latest ranHi of S, is below s - W - slack + ttl: s >
// maxRan + W + slack - ttl. (The later window's counter, first written at or after s - slack, is
// alive throughout: prepare keeps slack and the run-times well below a window.) Counting only
// admits, only what certainly ran before z, and only in windows the admits are certainly in, every
// correct member's count is at least this: none is blamed. (A microsecond more on s spares a member
// that weighs in doubles, as upstash's Lua and httprate do, an exact tie its rounding broke low.)
func (j *judge) threshold(limit int64, cur, prev []item, slack int64) (proof, bool) {
	if int64(len(cur)+len(prev)) < limit+1 {
		return proof{}, false
	}
	if int64(len(cur)) > limit {
		// All of cur prove it at once (R <= 0 whatever the weight): told with all of prev that
		// ran before the first of them.
		first, at := int64(math.MaxInt64), int64(math.MinInt64)
		for _, it := range cur {
			first, at = min(first, it.ranLo), max(at, it.hi)
		}
		p := proof{d: minD, admitted: int64(len(cur)), at: at}
		for _, it := range prev {
			if it.ranHi < first {
				p.previous++
			}
		}
		return p, true
	}
	byRan := append(j.byRan[:0], cur...)
	slices.SortFunc(byRan, func(a, b item) int { return cmp.Compare(b.ranLo, a.ranLo) })
	var best proof
	found := false
	byHi := j.byHi[:0] // the admits of cur with ranLo >= a, by hi
	defer func() { j.byRan, j.byHi = byRan, byHi }()
	for i := 0; i < len(byRan); {
		a := byRan[i].ranLo
		for ; i < len(byRan) && byRan[i].ranLo == a; i++ {
			k := sort.Search(len(byHi), func(x int) bool { return byHi[x].hi > byRan[i].hi })
			byHi = append(byHi, item{})
			copy(byHi[k+1:], byHi[k:])
			byHi[k] = byRan[i]
		}
		before, previous := int64(0), int64(0)
		for _, it := range cur {
			if it.ranHi < a {
				before++
			}
		}
		for _, it := range prev {
			if it.ranHi < a {
				previous++
			}
		}
		maxRan := int64(math.MinInt64)
		for e, it := range byHi {
			maxRan = max(maxRan, it.ranHi)
			if e+1 < len(byHi) && byHi[e+1].hi == it.hi {
				continue
			}
			n := int64(e+1) + before
			r := limit + 1 - n
			p := proof{admitted: n, previous: previous, at: it.hi}
			switch {
			case r <= 0:
				p.d = minD
			case previous >= r:
				t := it.hi - j.w + ceilDiv(j.w*r, previous) + 1 // a µs to spare for members that weigh in doubles
				alive := maxRan + j.w + slack - j.ttl           // s must be above it
				if t > alive {
					p.d = 2 * t
				} else {
					p.d = 2*alive + 1
				}
			default:
				continue
			}
			if !found || p.d < best.d || p.d == best.d && p.at < best.at {
				best, found = p, true
			}
		}
	}
	return best, found
}

// violation is a stretch of window starts (doubled line) proven over, and its proof.
type violation struct {
	fromD, toD int64
	proof
}

// violations are the chunk's stretches of window starts proven over against limit.
func (j *judge) violations(limit int64, cells []cell, slack int64) []violation {
	var out []violation
	for _, c := range cells {
		p, ok := j.threshold(limit, c.cur, c.prev, slack)
		if !ok {
			continue
		}
		if from := max(c.fromD, p.d); from <= c.toD {
			out = append(out, violation{fromD: from, toD: c.toD, proof: p})
		}
	}
	return out
}

// verdict is the number of stretches proven over against limit, and the first one's proof.
// Epoch-aligned, each window is one; at any alignment, a chunk is proven when the window starts
// proven over cover every phase (the doubled line modulo 2W), and its first proof is the one that
// ruled out the last phase standing, in the order the admits' clocks read.
func (j *judge) verdict(limit int64) (int64, *First) {
	var events int64
	var first *First
	take := func(f First) {
		if first == nil || f.AtUs < first.AtUs {
			first = &f
		}
	}
	for ci, cells := range j.chunks {
		vs := j.violations(limit, cells, j.slack[ci])
		if j.epoch {
			for _, v := range vs {
				events++
				take(j.first(limit, v, v.fromD))
			}
			continue
		}
		sort.SliceStable(vs, func(a, b int) bool { return vs[a].at < vs[b].at })
		period := 2 * j.w
		if !covers(vs, period) {
			continue
		}
		events++
		// The fewest proofs, in clock order, that cover every phase; the last of them ruled out
		// the last phase standing.
		n := sort.Search(len(vs), func(n int) bool { return covers(vs[:n], period) })
		last := vs[n-1]
		take(j.first(limit, last, uncoveredIn(vs[:n-1], last, period)))
	}
	return events, first
}

// peak is the least limit no chunk proves too small, searched up to 4×limit+1.
func (j *judge) peak(limit int64) int64 {
	ceiling := 4*limit + 1
	lo, hi := int64(0), ceiling // the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if events, _ := j.verdict(mid); events > 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// covers says whether vs, modulo period, cover every point of [0, period).
func covers(vs []violation, period int64) bool {
	return len(gaps(vs, period)) == 0
}

// span is a stretch of the doubled line, both ends included.
type span struct{ from, to int64 }

// gaps are the stretches of [0, period) that vs, modulo period, leave uncovered.
func gaps(vs []violation, period int64) []span {
	var spans []span
	for _, v := range vs {
		if v.toD-v.fromD+1 >= period {
			return nil
		}
		base := floorDiv(v.fromD, period) * period
		lo, hi := v.fromD-base, v.toD-base
		if hi >= period {
			spans = append(spans, span{lo, period - 1}, span{0, hi - period})
		} else {
			spans = append(spans, span{lo, hi})
		}
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].from < spans[b].from })
	var out []span
	next := int64(0) // every point below next is covered
	for _, sp := range spans {
		if sp.from > next {
			out = append(out, span{next, sp.from - 1})
		}
		next = max(next, sp.to+1)
	}
	if next < period {
		out = append(out, span{next, period - 1})
	}
	return out
}

// uncoveredIn is a point of last's stretch (doubled line) that vs leave uncovered: a phase that
// last ruled out (one exists when vs do not cover every phase and vs with last do).
func uncoveredIn(vs []violation, last violation, period int64) int64 {
	base := floorDiv(last.fromD, period) * period
	for _, g := range gaps(vs, period) {
		for _, shift := range []int64{base, base + period} {
			if from, to := max(g.from+shift, last.fromD), min(g.to+shift, last.toD); from <= to {
				return from
			}
		}
	}
	return last.fromD
}
