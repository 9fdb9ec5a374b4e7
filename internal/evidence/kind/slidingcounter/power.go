package slidingcounter

import (
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// caughtFrom is the power of the evidence in ds (SPEC section 10): the smallest k >= 1 for which k
// admits over a correct member's, in every window, would have been proven an overshoot; ok is false
// when none up to maxK would have been.
//
// As for every kind (internal/evidence/overshoot/power.go, whose search it is): the judged admits are first thinned to
// what the most permissive member, on windows from the epoch, admits of them in the order they ran
// (each at the middle of its clock's and its run's bounds, which the rule allows, so the thinned
// admits are never blamed); then k phantoms are added in every epoch window that holds a thinned
// admit, each a copy of one of them (all on the window's first, all on its last, or spread over
// them in turn), judged exactly as that admit was. The power is the smallest k proven, for the
// weakest of the three placements; more phantoms only add evidence, so k is found by bisection.
func caughtFrom(s Spec, ds []decision, maxK int64) (int64, bool) {
	thinned := thin(s, ds)
	if len(thinned) == 0 {
		return 0, false
	}
	w := s.windowUs()
	sort.SliceStable(thinned, func(a, b int) bool { return clockMid(thinned[a]) < clockMid(thinned[b]) })
	return overshoot.Weakest(maxK, func(place overshoot.Placement, k int64) bool {
		var with []decision
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
}

func clockMid(d decision) int64 { return d.ClockLoUs + (d.ClockHiUs-d.ClockLoUs)/2 }

// thin is the judged admits of ds that the most permissive member (the weighted share taken
// exactly, windows from the epoch, counters that never expire) admits, deciding each at the middle
// of its clock's bounds in the order of the middles of its run's.
func thin(s Spec, ds []decision) []decision {
	var admits []decision
	for _, d := range ds {
		if d.Outcome == evidence.Admitted && d.RanHiUs-d.RanLoUs <= s.maxRunUs() {
			admits = append(admits, d)
		}
	}
	sort.SliceStable(admits, func(a, b int) bool {
		return admits[a].RanLoUs+(admits[a].RanHiUs-admits[a].RanLoUs)/2 < admits[b].RanLoUs+(admits[b].RanHiUs-admits[b].RanLoUs)/2
	})
	w := s.windowUs()
	counts := map[int64]int64{}
	var kept []decision
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
