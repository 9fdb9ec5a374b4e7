package sliding

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// spans is the sliding window's rule over the calls' intervals: at most the limit of admits in
// any window-long interval, so more than m limits certainly inside m windows' length prove that
// one of its m window-long pieces held too many.
type spans struct{}

// Spans implements overshoot.SpanRule: one to overshoot.IntervalSpans windows, each shortened by
// its allowance.
func (spans) Spans(limit, windowUs int64) []overshoot.Span {
	var out []overshoot.Span
	for m := int64(1); m <= overshoot.IntervalSpans; m++ {
		span := m*windowUs - overshoot.SpanAllowance(m*windowUs)
		out = append(out, overshoot.Span{Us: span, Bound: float64(m * limit), Pieces: m})
	}
	return out
}

// Peak implements overshoot.SpanRule: one of the pieces held this many.
func (spans) Peak(sp overshoot.Span, limit, count int64) int64 {
	if sp.Pieces == 1 {
		return count
	}
	if excess := count - sp.Pieces*limit; excess > 0 {
		return limit + (excess+sp.Pieces-1)/sp.Pieces
	}
	return 0
}

// Allowed implements overshoot.SpanRule.
func (spans) Allowed(sp overshoot.Span, limit int64) int64 {
	if sp.Pieces > 1 {
		return sp.Pieces * limit
	}
	return 0
}

// Thin implements overshoot.SpanRule.
func (spans) Thin(mids []tally.Count, limit, windowUs int64) []int64 {
	return overshoot.ThinSliding(mids, limit, windowUs)
}

// TwoClocks is the sliding window's checker over admits judged on two clocks at once: the
// virtual clock's TIME and the real clock its TTLs run on (overshoot/clock_evidence.go). It checks
// one window-long span only: a longer span's proof splits it into window-long pieces of one clock,
// and an admit whose TIME is in one piece may have run in the next, so m pieces of the span no
// longer bound it to m limits (the admits, in the order they ran, climb both clocks at once and
// can cross 2m-1 pieces of the two).
// Its lag stays the five windows' (the virtual clock may run behind the real one).
func TwoClocks(limit int64, window time.Duration) *overshoot.IntervalChecker {
	c := Intervals(limit, window)
	c.JudgeOnly(1)
	return c
}

// Intervals is the sliding window's checker over the calls' intervals (on the server's clock,
// or behind HTTP).
func Intervals(limit int64, window time.Duration) *overshoot.IntervalChecker {
	return overshoot.NewIntervalChecker(spans{}, limit, window)
}
