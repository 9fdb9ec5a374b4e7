package bench

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/human"
)

// allowances name what widens the strategy's evidence, for saying why admits went unjudged:
// the workers' skew, the server's clock, the lateness the evidence allows for.
func (s *strategyState) allowances() string { return Allowances(s.cfg, s.run) }

// Allowances name what widens the evidence of run's admits under cfg (StrategySnapshot.Allowances).
func Allowances(cfg Config, run StrategyRun) string {
	var parts []string
	if cfg.Skew > 0 {
		parts = append(parts, "skew ±"+human.Latency(cfg.Skew))
	}
	model := cfg.Limiter.Describe().Model
	switch clock := model.Clock(limitsOf(cfg), run.EpochAligned); {
	case run.Endpoint:
		parts = append(parts, "the endpoint's clock (each admit judged over its request's interval)")
	case run.ServerClock:
		parts = append(parts, "the server's clock (each admit judged over its call's interval)")
	case clock.LateMs > 0:
		parts = append(parts, fmt.Sprintf("a lateness bound of %dms", clock.LateMs))
	case model.LateByWindow():
		parts = append(parts, "calls answered a window or more after their time")
	}
	return strings.Join(parts, " and ")
}

// probe is the strategy's evidence so far with its power, for deciding whether the run has
// what its verdict needs (extend.go); the ticks' state is left alone.
func (s *strategyState) probe() StrategySnapshot { return s.view(0, 0, fold.Probe) }

// view is the strategy's snapshot; sinceTick is the time since the previous snapshot.
func (s *strategyState) view(sinceTick, active time.Duration, mode fold.Mode) StrategySnapshot {
	final := mode == fold.Final
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
	s.judgePass(final)
	s.evidence.Fold(&v.Findings, mode)
	s.refusalsUnjudged(&v.Refusals)
	v.FirstOvershoot = s.firstOver.Load()
	v.Allowances = s.allowances()
	v.Contend(s.cfg.Limit)
	if mode == fold.Probe {
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
