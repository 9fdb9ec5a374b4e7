package bench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench/overshoot"
	"github.com/limitctl/limitctl/internal/human"
)

// caughtFrom is the strategy's power: the strongest any key's evidence states, 0 when none
// states one up to PowerSearched.
func (s *strategyState) caughtFrom() *int64 {
	best := int64(0)
	for _, ev := range s.evidence {
		if k, ok := ev.CaughtFrom(PowerSearched(s.cfg.Limit)); ok && (best == 0 || k < best) {
			best = k
		}
	}
	return &best
}

// caughtFromFirstHit is the power windows anchored at their openers would have had, where the
// verdict did not judge by them (overshoot.Evidence.CaughtFromAnchored); nil where it is no
// better than the verdict's own, or was not measured.
func (s *strategyState) caughtFromFirstHit(verdict int64) *int64 {
	if s.run.FirstHitWindows {
		return nil
	}
	best := int64(0)
	for _, ev := range s.evidence {
		if k, ok := ev.CaughtFromAnchored(PowerSearched(s.cfg.Limit)); ok && (best == 0 || k < best) {
			best = k
		}
	}
	if best == 0 || verdict != 0 && best >= verdict {
		return nil
	}
	return &best
}

// allowances name what widens the strategy's evidence, for saying why admits went unjudged:
// the workers' skew, the server's clock, the lateness the evidence allows for.
func (s *strategyState) allowances() string { return Allowances(s.cfg, s.run) }

// Allowances name what widens the evidence of run's admits under cfg (StrategySnapshot.Allowances).
func Allowances(cfg Config, run StrategyRun) string {
	var parts []string
	if cfg.Skew > 0 {
		parts = append(parts, "skew ±"+human.Latency(cfg.Skew))
	}
	switch clock := overshoot.ClockFor(limitsOf(cfg), run.EpochAligned); {
	case run.Endpoint:
		parts = append(parts, "the endpoint's clock (each admit judged over its request's interval)")
	case run.ServerClock:
		parts = append(parts, "the server's clock (each admit judged over its call's interval)")
	case clock.LateMs > 0:
		parts = append(parts, fmt.Sprintf("a lateness bound of %dms", clock.LateMs))
	case cfg.Limiter.Describe().Evidence.Windowed():
		parts = append(parts, "calls answered a window or more after their time")
	}
	return strings.Join(parts, " and ")
}

// viewMode is what a view is for: a tick's snapshot, the engine's probe of the evidence so far
// (its power included, nothing of the ticks taken), or the run's final snapshot.
type viewMode int

const (
	tickView viewMode = iota
	probeView
	finalView
)

// probe is the strategy's evidence so far with its power, for deciding whether the run has
// what its verdict needs (extend.go); the ticks' state is left alone.
func (s *strategyState) probe() StrategySnapshot { return s.view(0, 0, probeView) }

// view is the strategy's snapshot; sinceTick is the time since the previous snapshot.
func (s *strategyState) view(sinceTick, active time.Duration, mode viewMode) StrategySnapshot {
	final := mode == finalView
	attempts := s.attempts.Load()
	v := StrategySnapshot{
		Name: s.run.Name, Attempts: attempts, Admitted: s.admitted.Load(), Rejected: s.rejected.Load(),
		Errors: s.errs.Load(), Retries: s.retries.Load(),
		FailOpenAdmits: s.failOpen.Load(), FailClosedRejects: s.failClosed.Load(),
		ReleaseErrors: s.releaseErrs.Load(), Abandoned: s.abandoned.Load(),
	}
	s.errMu.Lock()
	v.ErrorsByKind = make(map[string]int64, len(s.errKinds))
	for k, n := range s.errKinds {
		v.ErrorsByKind[k] = n
	}
	v.ErrorSamples = append([]ErrorSample(nil), s.errSamples...)
	s.errMu.Unlock()
	v.Statuses = s.statuses.counts()
	for _, ev := range s.evidence {
		var r overshoot.CheckResult
		if final {
			r = ev.Finish()
		} else {
			r = ev.Result()
		}
		v.Peak = max(v.Peak, r.Peak)
		v.Overshoot = max(v.Overshoot, r.Overshoot)
		v.OvershootEvent += r.OvershootEvent
		v.Current = max(v.Current, r.Current)
		v.Unjudged += r.Unjudged
		v.Early += ev.Early()
		if mode == tickView {
			v.TickPeak = max(v.TickPeak, ev.TakeTickPeak())
		}
	}
	if mode != tickView {
		v.CaughtFrom = s.caughtFrom()
	}
	if final {
		v.CaughtFromFirstHit = s.caughtFromFirstHit(*v.CaughtFrom)
		v.Windows = WindowsOf(s.evidence)
	}
	v.FirstOvershoot = s.firstOver.Load()
	v.Allowances = s.allowances()
	s.judgeRefusals(final, &v)
	v.Contended = v.Rejected > 0 || v.Peak >= s.cfg.Limit
	if mode == probeView {
		return v
	}
	if sinceTick > 0 && !final {
		v.Throughput = float64(attempts-s.lastAttempts) / sinceTick.Seconds()
	}
	if f := time.Duration(s.finished.Load()); f > 0 && f < active {
		active = f // done before the run: rate it over its own time
	}
	if active > 0 {
		v.AvgThroughput = float64(attempts) / active.Seconds()
	}
	if final {
		v.Throughput = v.AvgThroughput
	}
	s.lastAttempts = attempts
	s.histMu.Lock()
	if final {
		v.Histogram = s.hist.Export()
	}
	if s.hist.TotalCount() > 0 {
		v.Latency = Latency{
			P50: us(s.hist.ValueAtQuantile(50)), P90: us(s.hist.ValueAtQuantile(90)),
			P99: us(s.hist.ValueAtQuantile(99)), P999: us(s.hist.ValueAtQuantile(99.9)), Max: us(s.hist.Max()),
		}
	}
	s.histMu.Unlock()
	return v
}

func us(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// round3 keeps three decimals for display values.
func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
