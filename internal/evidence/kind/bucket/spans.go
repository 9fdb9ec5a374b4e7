package bucket

import (
	"math"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// spans is the bucket's rule over the calls' intervals: at most burst + rate*T admits in any
// interval of length T, so what is drawn certainly inside a span beyond its refill (and the
// allowance's) is drawn beyond the burst.
type spans struct{ ratePerUs float64 }

// Spans implements overshoot.SpanRule: an eighth of the time the bucket refills its burst to
// twice it.
func (r spans) Spans(_, windowUs int64) []overshoot.Span {
	var out []overshoot.Span
	for _, f := range []float64{0.125, 0.25, 0.5, 1, 2} {
		span := int64(f * float64(windowUs))
		out = append(out, overshoot.Span{Us: span, Bound: r.ratePerUs * float64(span+overshoot.SpanAllowance(span))})
	}
	return out
}

// Peak implements overshoot.SpanRule: the most drawn beyond refill.
func (spans) Peak(sp overshoot.Span, _, count int64) int64 {
	return int64(math.Floor(float64(count) - sp.Bound + 1e-9))
}

// Allowed implements overshoot.SpanRule: the burst and the refill.
func (spans) Allowed(sp overshoot.Span, limit int64) int64 {
	return limit + int64(math.Floor(sp.Bound+1e-9))
}

// Thin implements overshoot.SpanRule.
func (r spans) Thin(mids []tally.Count, limit, _ int64) []int64 {
	return overshoot.ThinBucket(mids, limit, r.ratePerUs)
}

// Intervals is the bucket's checker over the calls' intervals: burst tokens refilled at rate a
// second.
func Intervals(burst int64, rate float64) *overshoot.IntervalChecker {
	refill := time.Duration(float64(burst) / rate * float64(time.Second))
	return overshoot.NewIntervalChecker(spans{ratePerUs: rate / 1e6}, burst, refill)
}
