package fixed

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// spans is the fixed window's rule over the calls' intervals, whatever its alignment (on the
// epoch, or anchored at a first hit as SET NX EX does): at most the limit in each window, windows
// disjoint and window-long, so an interval shorter than m windows touches at most m+1 of them,
// and more than m+1 limits certainly inside it prove, by pigeonhole, one window too many.
type spans struct{}

// Spans implements overshoot.SpanRule: one to overshoot.IntervalSpans windows, each shortened by
// its allowance.
func (spans) Spans(limit, windowUs int64) []overshoot.Span {
	var out []overshoot.Span
	for m := int64(1); m <= overshoot.IntervalSpans; m++ {
		span := m*windowUs - overshoot.SpanAllowance(m*windowUs)
		out = append(out, overshoot.Span{Us: span, Bound: float64((m + 1) * limit), Pieces: m + 1})
	}
	return out
}

// Peak implements overshoot.SpanRule: pigeonhole over the windows it touches.
func (spans) Peak(sp overshoot.Span, _, count int64) int64 {
	return (count + sp.Pieces - 1) / sp.Pieces
}

// Allowed implements overshoot.SpanRule.
func (spans) Allowed(sp overshoot.Span, limit int64) int64 { return sp.Pieces * limit }

// Thin implements overshoot.SpanRule: a fixed window of any alignment admits no more than a
// sliding one does.
func (spans) Thin(mids []tally.Count, limit, windowUs int64) []int64 {
	return overshoot.ThinSliding(mids, limit, windowUs)
}

// Intervals is the fixed window's checker over the calls' intervals, whatever its alignment.
func Intervals(limit int64, window time.Duration) *overshoot.IntervalChecker {
	return overshoot.NewIntervalChecker(spans{}, limit, window)
}
