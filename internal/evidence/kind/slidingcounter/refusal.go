package slidingcounter

import (
	"fmt"
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
)

// FalseReject is a refusal proven wrong: at every window start its decision can have fallen after,
// even the strictest member (the weighted share rounded up) had room. The most any member can have
// counted against it is at the window start WindowStartUs: Current admits possibly in that window,
// and Previous possibly in the one before only, weighed by Weight (1 - its least fraction into
// the window); Current + ⌈Previous·Weight⌉ < Limit.
type FalseReject struct {
	Index                   int // in the decisions given
	WindowStartUs, WindowUs int64
	Current, Previous       int64
	Weight                  float64
	Limit                   int64
	weightUs                int64 // Weight times the window
}

// RoundedUp is ⌈Previous·Weight⌉, the most any member counted of the previous window.
func (f FalseReject) RoundedUp() int64 { return ceilDiv(f.Previous*f.weightUs, f.WindowUs) }

// How says the false reject in words: "refused with at most 3 admitted in window [1.000s,
// 2.000s) and 4 in the previous at weight 0.50: even rounded up, 3 + 2 < 10".
func (f FalseReject) How(originUs int64) string {
	return fmt.Sprintf("refused with at most %d admitted in window [%s, %s) and %d in the previous at weight %.2f: even rounded up, %d + %d < %d",
		f.Current, seconds(f.WindowStartUs-originUs), seconds(f.WindowStartUs+f.WindowUs-originUs), f.Previous, f.Weight,
		f.Current, f.RoundedUp(), f.Limit)
}

// falseRejects judges the refusals among ds against s's promise (s valid): a refusal is wrong only
// where even the strictest member would have admitted it, whatever window it fell in.
func falseRejects(s Spec, ds []decision) []FalseReject {
	r := newRefusals(s)
	for _, d := range ds {
		r.add(d)
	}
	type verdict struct {
		wrong bool
		f     FalseReject
	}
	seen := map[[3]int64]verdict{}
	var out []FalseReject
	for i, z := range ds {
		if z.Outcome != evidence.Refused {
			continue
		}
		key := [3]int64{z.ClockLoUs, z.ClockHiUs, z.RanHiUs}
		v, ok := seen[key]
		if !ok {
			v.f, v.wrong = r.judge(z)
			seen[key] = v
		}
		if v.wrong {
			v.f.Index = i
			out = append(out, v.f)
		}
	}
	return out
}

// refusals is what the refusal rule keeps of a key's decisions: every possible admit (admitted,
// or of unknown outcome), each with its clock's bounds widened by the grain and the drift.
//
// The rule. Let z be a refusal whose limiter's clock read θ in [lo, hi], and s the start of its
// window (s in (θ-W, θ]: any s in (lo-W, hi]; epoch-aligned, the multiples of W there). A correct
// member counts only admits, and only those that ran before z; a call of unknown outcome may have
// admitted, at any time after it was sent. So when it decided z its count c of z's window and p of
// the one before were at most: every possible admit that may have run before z (ranLo below z's
// ranHi) counted once, as 1 where its clock can be in [s, s+W], else as p's where it can be in
// [s-W, s] (a closed window only counts more). z's fraction f into its window is at least (lo -
// s)/W, or 0. The strictest member, rounding the weighted share up, admits when c + ⌈p·(1-f)⌉ < L,
// that is c + p·(1-f) <= L-1 for a whole c; so z is proven wrong when, at every s,
//
//	A(s) + B(s)·(1 - max(0, lo-s)/W) <= L - 1.
//
// A and B change only where an admit's clock bounds (lo, hi, and both a window away) meet s, and
// between two such points the weight grows with s: the largest value is at one of them or at hi,
// and all of those are tried. Counters that expire, idle spells, a new phase after them, rounding
// (the grain), skew and reordering (ranLo, and the server clock's drift for timed decisions) can
// only make a correct member count less than this: none is blamed.
type refusals struct {
	spec         Spec
	w, g, drift  int64
	finite, open []possible // finite by lo; open: a clock that may read at any time after
	widest       int64
	near         []possible // judge's scratch
	starts       []int64
}

// possible is a possible admit: its clock in [lo, hi], run at or after ranLo.
type possible struct{ lo, hi, ranLo int64 }

func newRefusals(s Spec) *refusals {
	r := &refusals{spec: s, w: s.windowUs(), g: s.grainUs()}
	if s.Timing == Intervals {
		r.drift = ceilDiv(3*r.w+s.maxRunUs(), 1000) // the server's clock, 0.1% of three windows and a call away
	}
	return r
}

// add keeps d, where it may have taken room.
func (r *refusals) add(d decision) {
	if !d.mayAdmit() {
		return
	}
	p := possible{d.ClockLoUs - r.g - r.drift, d.ClockHiUs + r.g + r.drift, d.RanLoUs}
	if d.ClockHiUs >= forever {
		p.hi = forever
		r.open = append(r.open, p)
		return
	}
	// Decisions come in about the order of their clocks: the search from the back is short.
	i := len(r.finite)
	r.finite = append(r.finite, p)
	for i > 0 && r.finite[i-1].lo > p.lo {
		r.finite[i] = r.finite[i-1]
		i--
	}
	r.finite[i] = p
	r.widest = max(r.widest, p.hi-p.lo)
}

// forget drops the possible admits whose clock is certainly before cut: no refusal judged from
// now on reaches back to them (reach says how far one does).
func (r *refusals) forget(cut int64) {
	n := 0
	for n < len(r.finite) && r.finite[n].lo+r.widest < cut {
		n++
	}
	r.finite = append(r.finite[:0], r.finite[n:]...)
}

// reach is how far before its clock's low bound a refusal's judging reads possible admits.
func (r *refusals) reach() int64 { return 2*r.w + r.g + r.drift }

// judge decides z: wrong when even the strictest member had room at every window start it can
// have fallen after, with the evidence for the most any member can have counted.
func (r *refusals) judge(z decision) (best FalseReject, wrong bool) {
	s, w := r.spec, r.w
	lo, hi := z.ClockLoUs-r.g-r.drift, z.ClockHiUs+r.g+r.drift
	// The possible admits that may have run before z and can be in a window that matters.
	near := r.near[:0]
	from := sort.Search(len(r.finite), func(k int) bool { return r.finite[k].lo >= lo-2*w-r.widest })
	for _, p := range r.finite[from:] {
		if p.lo > hi+w {
			break
		}
		if p.hi >= lo-2*w && p.ranLo <= z.RanHiUs {
			near = append(near, p)
		}
	}
	for _, p := range r.open {
		if p.lo <= hi+w && p.ranLo <= z.RanHiUs {
			near = append(near, p)
		}
	}
	r.near = near
	best = FalseReject{WindowUs: w, Limit: s.Limit}
	if int64(len(near)) < s.Limit { // fewer can never fill the window
		best.WindowStartUs, best.Current, best.Weight, best.weightUs = lo, int64(len(near)), 1, w
		return best, true
	}
	starts := r.starts[:0]
	if s.Align == EpochAligned {
		for k := floorDiv(lo, w); k*w <= hi; k++ {
			starts = append(starts, k*w)
		}
	} else {
		starts = append(starts, lo-w, hi)
		for _, p := range near {
			for _, b := range [...]int64{p.hi, p.lo - w, p.hi + w, p.lo} {
				if b >= lo-w && b <= hi {
					starts = append(starts, b)
				}
			}
		}
	}
	r.starts = starts
	var most int64 = -1 // the largest value times W
	for _, st := range starts {
		var cur, prev int64
		for _, p := range near {
			switch {
			case p.hi >= st && p.lo <= st+w:
				cur++
			case p.hi >= st-w && p.lo <= st:
				prev++
			}
		}
		weight := w - max(0, lo-st)
		if v := cur*w + prev*weight; v > most {
			most = v
			best.WindowStartUs, best.Current, best.Previous = st, cur, prev
			best.Weight, best.weightUs = float64(weight)/float64(w), weight
		}
		if most > (s.Limit-1)*w {
			return best, false
		}
	}
	return best, true
}
