package slidingcounter

import (
	"fmt"
	"sort"
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

// FalseRejects judges the refusals among ds against s's promise (s valid): a refusal is wrong only
// where even the strictest member would have admitted it, whatever window it fell in.
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
func FalseRejects(s Spec, ds []Decision) []FalseReject {
	w, g := s.windowUs(), s.grainUs()
	drift := int64(0)
	if s.Timing == Intervals {
		drift = ceilDiv(3*w+s.maxRunUs(), 1000) // the server's clock, 0.1% of three windows and a call away
	}
	type possible struct{ lo, hi, ranLo int64 }
	var finite, open []possible // open: a clock that may read at any time after
	widest := int64(0)
	for _, d := range ds {
		if !d.mayAdmit() {
			continue
		}
		p := possible{d.ClockLoUs - g - drift, d.ClockHiUs + g + drift, d.RanLoUs}
		if d.ClockHiUs >= forever {
			p.hi = forever
			open = append(open, p)
			continue
		}
		finite = append(finite, p)
		widest = max(widest, p.hi-p.lo)
	}
	sort.Slice(finite, func(a, b int) bool { return finite[a].lo < finite[b].lo })

	type verdict struct {
		wrong bool
		f     FalseReject
	}
	seen := map[[3]int64]verdict{}
	var out []FalseReject
	var near []possible
	var starts []int64
	for i, z := range ds {
		if z.Outcome != Refused {
			continue
		}
		key := [3]int64{z.ClockLoUs, z.ClockHiUs, z.RanHiUs}
		if v, ok := seen[key]; ok {
			if v.wrong {
				v.f.Index = i
				out = append(out, v.f)
			}
			continue
		}
		lo, hi := z.ClockLoUs-g-drift, z.ClockHiUs+g+drift
		// The possible admits that may have run before z and can be in a window that matters.
		near = near[:0]
		from := sort.Search(len(finite), func(k int) bool { return finite[k].lo >= lo-2*w-widest })
		for _, p := range finite[from:] {
			if p.lo > hi+w {
				break
			}
			if p.hi >= lo-2*w && p.ranLo <= z.RanHiUs {
				near = append(near, p)
			}
		}
		for _, p := range open {
			if p.lo <= hi+w && p.ranLo <= z.RanHiUs {
				near = append(near, p)
			}
		}
		best := FalseReject{Index: i, WindowUs: w, Limit: s.Limit}
		wrong := true
		if int64(len(near)) >= s.Limit { // fewer can never fill the window
			starts = starts[:0]
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
					wrong = false
					break
				}
			}
		} else {
			best.WindowStartUs, best.Current, best.Weight, best.weightUs = lo, int64(len(near)), 1, w
		}
		seen[key] = verdict{wrong, best}
		if wrong {
			out = append(out, best)
		}
	}
	return out
}
