package bench

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// EvidenceSpec is the overshoot evidence of one key of run under cfg as the engine builds it,
// without the run's own hooks (a witness or admits shared with other processes, the power's
// budget, the first overshoot's trace): what judge replays a recorded run's calls against.
func EvidenceSpec(cfg Config, run StrategyRun, key string) overshoot.Spec {
	limits, model := limitsOf(cfg), cfg.Limiter.Describe().Model
	var promised time.Duration
	if run.Endpoint {
		promised = cfg.Hold
	}
	return overshoot.Spec{
		Model: model, Limits: limits, Clock: model.Clock(limits, run.EpochAligned), Timing: timingOf(cfg, run), Key: key,
		Horizon: cfg.Horizon, Quantum: run.TimeQuantum, Monotone: run.MonotoneTime,
		StaleAfter: cfg.StaleAfter, StaleUnit: run.Refusals.StaleUnit, Now: cfg.Now, Hold: promised,
		// Every call on the key is this process's, and each that may have admitted unjudged is
		// told to the evidence: windows can be anchored at their openers, where the contract
		// says they start there, or the power can say what that would have proven.
		OpenersSeen:     !run.AdmitAt && run.Admits == nil,
		AnchorAtOpeners: run.FirstHitWindows,
	}
}

// timingOf is what the evidence takes a call's time to be.
func timingOf(cfg Config, run StrategyRun) overshoot.Timing {
	switch {
	case run.AdmitAt:
		// A schedule's answer is a time in itself, on the script's clock: judged as a stamp, never
		// over the call's interval.
	case run.Endpoint:
		return overshoot.OnEndpoint
	case TwoClocks(cfg, run):
		return overshoot.OnTwoClocks
	case run.ServerClock:
		return overshoot.OnServerClock
	}
	return overshoot.OnStamps
}

// limitsOf is what a strategy's evidence is built from.
func limitsOf(cfg Config) overshoot.Limits {
	return overshoot.Limits{Limit: cfg.Limit, Window: cfg.Window, Rate: cfg.Rate, Skew: cfg.Skew}
}

// RefusalSpec is what run's refusal judges are built from under cfg; base is the stamp (µs) at
// the run's start.
func RefusalSpec(cfg Config, run StrategyRun, base int64) refusal.Spec {
	return refusal.Spec{
		Kind: string(cfg.Limiter), Model: cfg.Limiter.Describe().Model, Limit: cfg.Limit, Aligned: run.EpochAligned, Base: base,
		Window: cfg.Window.Microseconds(), RatePerSec: cfg.Rate, StaleAfter: cfg.StaleAfter.Microseconds(),
		Server: run.ServerClock, Monotone: run.MonotoneTime, Skew: cfg.Skew.Microseconds(), Horizon: cfg.Horizon.Microseconds(),
		Quantum: run.TimeQuantum, Rules: run.Refusals,
	}
}
