package bench

import (
	"context"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

// The load shapes of --profile.
const (
	ProfileSteady = "steady"
	ProfileBursty = "bursty"
)

// DefaultProfile is bursty for the window and bucket limiters: steady load never lets a bucket
// refill past its burst nor every window key expire, so it cannot catch a refill that is not
// capped. The concurrency limiter's bugs show under steady load, which also keeps its
// throughput numbers whole.
func DefaultProfile(k limiter.Kind) string {
	if k == limiter.Concurrency {
		return ProfileSteady
	}
	return ProfileBursty
}

// DefaultSkew is how far the workers' clocks disagree by default, so that requests reach Redis
// out of their now order, as from app servers whose clocks differ: what a log pruned too eagerly,
// a counter that expires with its window, or a bucket that trusts the latest caller's now (and
// so refills a gap twice) gets wrong. Every limiter gets it. The window and concurrency limiters
// get up to 5ms. The token bucket gets a fiftieth of the time one token takes to refill (1ms at
// 20 per second), at least 1ms and at most 5ms: its evidence forgives twice the skew's worth of
// refill, and a round trip's (clock_evidence.go), which must stay well under one token for a
// bucket one request too large to be proven, while any skew of a millisecond or more reorders the
// stamps enough for a bucket that refills across a backwards step to gain whole tokens within a
// second.
func DefaultSkew(k limiter.Kind, limit int64, window time.Duration) time.Duration {
	if k != limiter.TokenBucket {
		return 5 * time.Millisecond
	}
	if limit < 1 {
		return time.Millisecond
	}
	return min(5*time.Millisecond, max(time.Millisecond, window/time.Duration(limit)/50))
}

// A bursty cycle: load for burstWindows windows (two: every burst holds a whole window with its
// boundaries, where a counter that expires with its window lets a late request through), then an
// idle spell, each longer than a window (a bucket refills completely) and of a different length
// from the last. A bucket whose uncapped refill its own key's expiry hides (a TTL a little longer
// than its refill time) is caught only by a spell shorter than its TTL, and the longer the spell
// the more it shows: the first is 1.3 windows (an uncapped bucket then hands out 0.3 of a burst
// too many, which late calls left out of the evidence cannot hide), the second 1.1 (a TTL of 1.1
// refill times or more is caught within a default run of 10s), and the later ones up to 2.2. The
// series repeats.
const burstWindows = 2.0

var idleWindows = []float64{1.3, 1.1, 1.6, 1.2, 2.2, 1.8}

// burstCycles is one period of the series: each cycle's load and idle spell.
func burstCycles(window time.Duration) (burst time.Duration, idles []time.Duration, period time.Duration) {
	burst = time.Duration(burstWindows * float64(window))
	for _, w := range idleWindows {
		idle := time.Duration(w * float64(window))
		idles = append(idles, idle)
		period += burst + idle
	}
	return burst, idles, period
}

// idleSpell reports whether elapsed (since the run began) falls in an idle spell, and when
// that spell ends.
func idleSpell(cfg Config, elapsed time.Duration) (until time.Duration, idle bool) {
	if cfg.Profile != ProfileBursty || cfg.Window <= 0 {
		return 0, false
	}
	burst, idles, period := burstCycles(cfg.Window)
	start := elapsed - elapsed%period
	for _, spell := range idles {
		if elapsed < start+burst {
			return 0, false
		}
		if elapsed < start+burst+spell {
			return start + burst + spell, true
		}
		start += burst + spell
	}
	return 0, false // not reached: the spells fill the period
}

// waitActive sleeps through an idle spell; false means the context ended.
func (s *strategyState) waitActive(ctx context.Context) bool {
	until, idle := idleSpell(s.cfg, time.Since(s.begin))
	if idle {
		sleepCtx(ctx, until-time.Since(s.begin))
	}
	return ctx.Err() == nil
}

// workerSkew is worker w's fixed clock offset, spread evenly over [-Skew, +Skew].
func workerSkew(cfg Config, w int) time.Duration {
	if cfg.Skew <= 0 || cfg.Workers < 2 {
		return 0
	}
	return -cfg.Skew + time.Duration(int64(2*cfg.Skew)*int64(w)/int64(cfg.Workers-1))
}

// ActiveLoad is how much of a run of d the profile keeps under load (the rest is idle spells).
func ActiveLoad(profile string, window, d time.Duration) time.Duration {
	if profile != ProfileBursty || window <= 0 {
		return d
	}
	burst, idles, period := burstCycles(window)
	active := d / period * burst * time.Duration(len(idles))
	rest := d % period
	for _, spell := range idles {
		active += min(rest, burst)
		rest -= min(rest, burst+spell)
	}
	return active
}
