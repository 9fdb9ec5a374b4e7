package hammer

import (
	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/tui"
)

// DashboardOptions are the static facts and controls the live dashboard shows; asserts are
// judged live on every snapshot.
func DashboardOptions(o Options, live Live, profile colorprofile.Profile) tui.Options {
	exprs := make([]string, len(o.Assertions))
	for i, a := range o.Assertions {
		exprs[i] = a.Expr
	}
	return tui.Options{
		Target: live.Target, Limiter: string(o.Limiter), CountLabel: o.Limiter.Describe().CountLabel, Limit: o.Limit, Workers: o.Workers, Total: o.Duration,
		Asserts: exprs, Controls: live.Engine, Quit: live.Stop, Interrupt: live.Quit, Profile: profile,
		Verdict: verdict.InSnapshot,
		Redis:   live.Trace.Line, RedisHow: live.Trace.How,
		Judge: func(s bench.Snapshot) []tui.AssertResult {
			results := Evaluate(o.Assertions, bench.Summary{Limiter: s.Limiter, Limit: s.Limit, Strategies: s.Strategies})
			out := make([]tui.AssertResult, len(results))
			for i, r := range results {
				out[i] = tui.AssertResult{Expr: r.Expr, Known: r.Actual != nil, Passed: r.Passed, Actual: ActualText(r)}
			}
			return out
		},
	}
}
