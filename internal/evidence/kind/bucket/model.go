// Package bucket is the token bucket's evidence: at most burst + rate*T admits in any interval
// of length T.
package bucket

import (
	"math"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// Model is the token bucket's evidence.
var Model model

type model struct{}

// Checker is the bucket's check of the stamps in lateness tiers (Clock); over intervals, the
// bucket's bound on every span, the bucket refilling its burst (Limit) once per Window.
func (model) Checker(s overshoot.Spec, horizonMs int64) overshoot.Checker {
	if s.Timing != overshoot.OnStamps {
		return Intervals(s.Limit, s.Rate)
	}
	return overshoot.NewLateBucket(s.Limits, s.Clock.BucketTiers, horizonMs)
}

// lateTiers is how many lateness tiers the bucket's evidence keeps, each twice the last.
const lateTiers = 4

// Clock is the bucket's lateness tiers. A correct bucket is exact over the times it decides by:
// in any interval of them, at most burst + rate*T admits. A GCRA or a bucket that judges a late
// call at the call's own time decides by the stamps themselves. Others decide a late call at the
// latest time they saw (a refill that never runs backwards: elapsed = max(0, now - last)), or lose
// their state to a key expiry the server times (a TTL of exactly the time to refill): each decides
// call i at some time in [t_i, t_i + λ_i], λ_i how far the most advanced worker clock can be ahead
// of t_i when the call reaches Redis (the skew between the two clocks, its round trip and its
// stamp's rounding; an expiry set by the most advanced clock is reached by call i no sooner than
// that). Admits stamped in [x, y], each at most Λ late, are then decided in [x, y + Λ], so at most
// burst + rate*(y - x) + rate*Λ of them: rate*Λ tokens of slack, and any draw beyond burst + slack
// is at least one request too many. That holds for every subset of the admits, so the evidence
// keeps tiers: the admits at most Λ late with rate*Λ of slack, those at most 2Λ late with twice
// that, and so on; admits later than the last tier are left out (which only removes evidence),
// and the overshoot is the largest any tier proves. The first tier's slack stays well under a
// token at the default load, so one request too many per burst is proven (a full bucket's burst +
// 1 admits land within a few milliseconds of stamps); a bucket that hands out several too many
// after a rest is proven even when the calls that took them were slow (the first calls after an
// idle spell all start at once). Shared (--witness redis) evidence has no lateness of its own to
// go by, and judges every admit in the widest tier.
func (model) Clock(l overshoot.Limits, _ bool) overshoot.Clock {
	c := overshoot.Clock{Aligned: true}
	tier := firstTierMs(l)
	for i := 0; i < lateTiers; i++ {
		c.BucketTiers = append(c.BucketTiers, tier)
		tier *= 2
	}
	c.LateMs = c.BucketTiers[lateTiers-1]
	return c
}

// firstTierMs is the bucket's first lateness tier: the skew between any two worker clocks, a
// millisecond of rounding, and a round-trip budget of half a token's refill time, at least 10ms.
func firstTierMs(l overshoot.Limits) int64 {
	budget := int64(10_000)
	if l.Rate > 0 {
		budget = max(budget, int64(500_000/l.Rate))
	}
	return int64(math.Ceil(float64(2*l.Skew.Microseconds()+1000+budget) / 1000))
}

// TooLate: an admit later than the widest tier is left out.
func (model) TooLate(s overshoot.Spec, d evidence.Decision) bool {
	return s.Clock.LateMs > 0 && time.Duration(d.LateUs)*time.Microsecond > time.Duration(s.Clock.LateMs)*time.Millisecond
}

func (model) Rule(s refusal.Spec) (refusal.Rule, bool) { return newBucketJudge(s), !s.Server }

func (model) Counted() string    { return "admitted in its window" }
func (model) Unit() string       { return "per window" }
func (model) Alignable() bool    { return false }
func (model) TwoClocks() bool    { return false }
func (model) LateByWindow() bool { return false }
