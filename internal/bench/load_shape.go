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

// DefaultSkew is how far the workers' clocks disagree by default. The window limiters get a
// few milliseconds: requests then reach Redis out of their now order, as from app servers
// whose clocks differ, which is what a log pruned too eagerly or a counter that expires with
// its window gets wrong. The token bucket and the concurrency limiter get one clock: a bucket
// judged over skewed times must forgive a fraction of a token, which would hide a bucket one
// request too large, and a concurrency witness does not look at times at all.
func DefaultSkew(k limiter.Kind) time.Duration {
	if k == limiter.FixedWindow || k == limiter.SlidingWindow {
		return 5 * time.Millisecond
	}
	return 0
}

// A bursty cycle: load for burstWindows windows, then idle for idleWindows: longer than a
// window, so a bucket refills completely and every window's keys expire.
const (
	burstWindows = 2.0
	idleWindows  = 1.5
)

// idleSpell reports whether elapsed (since the run began) falls in an idle spell, and when
// that spell ends.
func idleSpell(cfg Config, elapsed time.Duration) (until time.Duration, idle bool) {
	if cfg.Profile != ProfileBursty || cfg.Window <= 0 {
		return 0, false
	}
	burst := time.Duration(burstWindows * float64(cfg.Window))
	cycle := burst + time.Duration(idleWindows*float64(cfg.Window))
	in := elapsed % cycle
	if in < burst {
		return 0, false
	}
	return elapsed - in + cycle, true
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
