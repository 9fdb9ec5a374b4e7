package slidingcounter

import "sort"

// CaughtFrom is the power of the evidence in ds (SPEC section 10): the smallest k >= 1 for which k
// admits over a correct member's, in every window, would have been proven an overshoot; ok is false
// when none up to maxK would have been.
//
// As for every kind (internal/evidence/overshoot/power.go): the judged admits are first thinned to
// what the most permissive member, on windows from the epoch, admits of them in the order they ran
// (each at the middle of its clock's and its run's bounds, which the rule allows, so the thinned
// admits are never blamed); then k phantoms are added in every epoch window that holds a thinned
// admit, each a copy of one of them (all on the window's first, all on its last, or spread over
// them in turn), judged exactly as that admit was. The power is the smallest k proven, for the
// weakest of the three placements; more phantoms only add evidence, so k is found by bisection.
func CaughtFrom(s Spec, ds []Decision, maxK int64) (int64, bool) {
	thinned := thin(s, ds)
	if len(thinned) == 0 {
		return 0, false
	}
	w := s.windowUs()
	sort.SliceStable(thinned, func(a, b int) bool { return clockMid(thinned[a]) < clockMid(thinned[b]) })
	worst := int64(0)
	for _, place := range placements {
		k, ok := smallestProven(maxK, func(k int64) bool {
			var with []Decision
			for start := 0; start < len(thinned); {
				win := floorDiv(clockMid(thinned[start]), w)
				end := start
				for end < len(thinned) && floorDiv(clockMid(thinned[end]), w) == win {
					end++
				}
				for i := start; i < end; i++ {
					for n := place(k, i-start, end-start) + 1; n > 0; n-- {
						with = append(with, thinned[i])
					}
				}
				start = end
			}
			chunks, _ := s.prepare(with)
			events, _ := s.judge(chunks).verdict(s.Limit)
			return events > 0
		})
		if !ok {
			return 0, false
		}
		worst = max(worst, k)
	}
	return worst, true
}

func clockMid(d Decision) int64 { return d.ClockLoUs + (d.ClockHiUs-d.ClockLoUs)/2 }

// thin is the judged admits of ds that the most permissive member (the weighted share taken
// exactly, windows from the epoch, counters that never expire) admits, deciding each at the middle
// of its clock's bounds in the order of the middles of its run's.
func thin(s Spec, ds []Decision) []Decision {
	var admits []Decision
	for _, d := range ds {
		if d.Outcome == Admitted && d.RanHiUs-d.RanLoUs <= s.maxRunUs() {
			admits = append(admits, d)
		}
	}
	sort.SliceStable(admits, func(a, b int) bool {
		return admits[a].RanLoUs+(admits[a].RanHiUs-admits[a].RanLoUs)/2 < admits[b].RanLoUs+(admits[b].RanHiUs-admits[b].RanLoUs)/2
	})
	w := s.windowUs()
	counts := map[int64]int64{}
	var kept []Decision
	for _, d := range admits {
		t := clockMid(d)
		k := floorDiv(t, w)
		c, p := counts[k], counts[k-1]
		if c*w+p*(w-(t-k*w)) < s.Limit*w {
			counts[k]++
			kept = append(kept, d)
		}
	}
	return kept
}

// placements are where a window's k phantoms go among its n admits (in clock order): each
// returns how many go on admit i.
var placements = []func(k int64, i, n int) int64{
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

// smallestProven is the least k in [1, maxK] with proven(k), for proven monotone in k.
func smallestProven(maxK int64, proven func(k int64) bool) (int64, bool) {
	lo, hi := int64(0), int64(1) // proven(0) is false: thinned admits are never blamed
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
