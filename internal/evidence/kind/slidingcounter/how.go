package slidingcounter

import (
	"fmt"
	"strconv"
)

// First is what proved an overshoot: Admitted admits certainly in the window [WindowStartUs,
// WindowStartUs+WindowUs) by the time the last of them ran (its clock at most AtUs), and Previous
// that ran before all of them, in that window or the one before, each weighing at least Weight
// (1 - the last one's fraction into the window): even floored, Admitted + ⌊Previous·Weight⌋ >
// Limit, so the last of them was refused by every correct member. At any alignment the window is
// one of the last phases standing: every other was ruled out by then.
type First struct {
	WindowStartUs, WindowUs int64
	Admitted, Previous      int64
	Weight                  float64
	AtUs                    int64
	Limit                   int64
	AnyAlignment            bool
}

// first is the proof v at the window start d (doubled line) as a First.
func (j *judge) first(limit int64, v violation, d int64) First {
	s := floorDiv(d, 2)
	return First{WindowStartUs: s, WindowUs: j.w, Admitted: v.admitted, Previous: v.previous,
		Weight: float64(j.w-(v.at-s)) / float64(j.w), AtUs: v.at, Limit: limit, AnyAlignment: !j.epoch}
}

// Floored is ⌊Previous·Weight⌋, the least weighted share of the previous window any member counted.
func (f First) Floored() int64 {
	return floorDiv(f.Previous*(f.WindowUs-(f.AtUs-f.WindowStartUs)), f.WindowUs)
}

// How says the first overshoot in words, times in seconds after originUs: "12 admitted in window
// [1.250s, 2.250s) with 7 in the previous window at weight 0.40: even floored, 12 + 2 > 10".
func (f First) How(originUs int64) string {
	line := fmt.Sprintf("%d admitted in window [%s, %s)", f.Admitted, seconds(f.WindowStartUs-originUs),
		seconds(f.WindowStartUs+f.WindowUs-originUs))
	if f.Previous > 0 {
		line += fmt.Sprintf(" with %d in the previous window at weight %.2f", f.Previous, f.Weight)
	}
	line += fmt.Sprintf(": even floored, %d + %d > %d", f.Admitted, f.Floored(), f.Limit)
	if f.AnyAlignment {
		line += " (every other alignment of the windows was ruled out by then)"
	}
	return line
}

// seconds writes µs as seconds to the millisecond.
func seconds(us int64) string {
	return strconv.FormatFloat(float64(us)/1e6, 'f', 3, 64) + "s"
}
