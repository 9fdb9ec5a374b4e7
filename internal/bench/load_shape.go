package bench

import (
	"context"
	"time"
)

// The load shapes of --profile.
const (
	ProfileSteady = "steady"
	ProfileBursty = "bursty"
)

// The default load shape: bursts with idle spells, and clocks that disagree by a few
// milliseconds. Steady load on one clock never refills a bucket past its burst nor lets a
// request arrive after its window's counter expired, so it cannot catch those bugs.
const (
	DefaultProfile = ProfileBursty
	DefaultSkew    = 5 * time.Millisecond
)

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
