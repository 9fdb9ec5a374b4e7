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

// DefaultProfile is the load shape a limiter is hammered with unless --profile says otherwise:
// bursty where its description asks for it (limiter.Description.Bursty says why).
func DefaultProfile(k limiter.Kind) string {
	if k.Describe().Bursty {
		return ProfileBursty
	}
	return ProfileSteady
}

// DefaultSkew is how far the workers' clocks disagree unless --skew says otherwise
// (limiter.Description.Skew says why).
func DefaultSkew(k limiter.Kind) time.Duration { return k.Describe().Skew }

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

// ActiveLoad is how much of a run of d the profile keeps under load (the rest is idle spells).
func ActiveLoad(profile string, window, d time.Duration) time.Duration {
	if profile != ProfileBursty || window <= 0 {
		return d
	}
	burst := time.Duration(burstWindows * float64(window))
	cycle := burst + time.Duration(idleWindows*float64(window))
	return d/cycle*burst + min(d%cycle, burst)
}
