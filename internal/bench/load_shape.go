package bench

import (
	"context"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

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

// UnalignedBurstWindows is how many windows a burst lasts for a fixed window judged with its
// alignment unknown: windows that may start anywhere are pinned down only by several contended
// windows in a row (each can hand a few admits on to the next), so a burst of n of them proves
// about limit/(n-1) too many per window. Four keep the power well under the limit within a
// default run of 10s at 1s windows, which bursts of two did not (not judged in 2 of 20 runs of a
// correct first-hit window on a busy machine).
const UnalignedBurstWindows = 4.0

var idleWindows = []float64{1.3, 1.1, 1.6, 1.2, 2.2, 1.8}

// burstCycles is one period of the series: each cycle's load (windows of it: burstWindows unless
// Config.BurstWindows says more) and idle spell.
func burstCycles(window time.Duration, windows float64) (burst time.Duration, idles []time.Duration, period time.Duration) {
	if windows <= 0 {
		windows = burstWindows
	}
	burst = time.Duration(windows * float64(window))
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
	if cfg.Profile != limiter.ProfileBursty || cfg.Window <= 0 {
		return 0, false
	}
	burst, idles, period := burstCycles(cfg.Window, cfg.BurstWindows)
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

// waitActive sleeps through an idle spell, and worker's stagger after it; false means the
// context ended.
func (s *strategyState) waitActive(ctx context.Context, worker int) bool {
	until, idle := idleSpell(s.cfg, time.Since(s.begin))
	if idle {
		sleepCtx(ctx, until+wakeStagger(worker, until)-time.Since(s.begin))
	}
	return ctx.Err() == nil
}

// workerSkew is worker w's fixed clock offset in [-Skew, +Skew], as a nemesis would set the
// clocks: the even workers behind, the odd ones ahead, at the whole skew and then three, two and
// one quarters of it in turn. Workers of neighbouring numbers, which a quiet machine tends to
// run one after another, then disagree by up to twice the skew, so calls stamped by a clock
// behind reach Redis right after calls stamped by one ahead, on every machine, not only on one
// whose scheduler happens to reorder them.
func workerSkew(cfg Config, w int) time.Duration {
	if cfg.Skew <= 0 || cfg.Workers < 2 {
		return 0
	}
	quarters := time.Duration(4 - (w/2)%4)
	if w%2 == 0 {
		return -cfg.Skew * quarters / 4
	}
	return cfg.Skew * quarters / 4
}

// wakeStagger is how long worker w waits, after the idle spell that ends at until, before its
// first call: a different order of the workers every burst, up to maxWakeStagger, so which
// clock's calls reach Redis first (and which interleave) varies from burst to burst instead of
// following the order the workers fell asleep in.
func wakeStagger(w int, until time.Duration) time.Duration {
	h := uint64(w+1)*0x9E3779B97F4A7C15 ^ uint64(until)*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return time.Duration(h % uint64(maxWakeStagger))
}

// maxWakeStagger bounds wakeStagger: well under a millisecond, so a burst still starts at once.
const maxWakeStagger = 400 * time.Microsecond
