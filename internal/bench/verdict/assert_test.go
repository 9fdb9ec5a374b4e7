package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
)

func TestParseAssertionAcceptsEveryOperatorAndUnits(t *testing.T) {
	strategies := []string{"naive", "lua", "lua-ts-member"}
	tests := []struct {
		expr     string
		strategy string
		metric   string
		op       string
		value    float64
	}{
		{"lua.overshoot==0", "lua", "overshoot", "==", 0},
		{"naive.overshoot>0", "naive", "overshoot", ">", 0},
		{" lua.p99 < 5ms ", "lua", "p99", "<", 5},
		{"lua.p99.9<=1.5s", "lua", "p99.9", "<=", 1500},
		{"lua.max>=250us", "lua", "max", ">=", 0.25},
		{"lua.p50<2", "lua", "p50", "<", 2}, // a bare latency number is milliseconds
		{"lua-ts-member.errors!=3", "lua-ts-member", "errors", "!=", 3},
		{"lua.throughput>=1000.5", "lua", "throughput", ">=", 1000.5},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			a, err := ParseAssertion(tt.expr, strategies)
			if err != nil {
				t.Fatal(err)
			}
			if a.Strategy != tt.strategy || a.Metric != tt.metric || a.Op != tt.op || a.Value != tt.value {
				t.Fatalf("got %+v", a)
			}
		})
	}
}

func TestParseAssertionRejectsBadExpressions(t *testing.T) {
	bad := map[string]string{
		"":                     "empty",
		"lua.overshoot":        "no comparison",
		"overshoot==0":         "strategy.metric",
		"eval.overshoot==0":    "not in this run",
		"lua.overshot==0":      "unknown metric",
		"lua.overshoot==":      "no value",
		"lua.overshoot==zero":  "not a number",
		"lua.overshoot==5ms":   "not a number",
		"lua.p99<fast":         "not a duration",
		"lua.overshoot===0":    "bad value",
		"lua.overshoot==NaN":   "finite",
		".overshoot==0":        "strategy.metric",
		"lua.errors => 0":      "unknown metric",
		"lua.overshoot<>0":     "bad value",
		"lua.p99<5 ms and 3ms": "not a duration",
	}
	for expr, want := range bad {
		t.Run(expr, func(t *testing.T) {
			_, err := ParseAssertion(expr, []string{"naive", "lua"})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("ParseAssertion(%q) = %v, want an error mentioning %q", expr, err, want)
			}
		})
	}
}

func TestAssertionEvaluation(t *testing.T) {
	srv := 12.5
	sum := bench.Summary{Strategies: []bench.StrategySnapshot{
		{Name: "naive", Errors: 0, Contended: true, Findings: fold.Findings{Overshoot: 7}},
		{Name: "lua", Latency: bench.Latency{P99: 4 * time.Millisecond}, ServerUsecPerCall: &srv, Contended: true, ReleaseErrors: 2, Abandoned: 41, Findings: fold.Findings{Overshoot: 0}},
		{Name: "eval", Findings: fold.Findings{Unjudged: 3}}, // no server time reported; never reached its limit
	}}
	tests := []struct {
		expr   string
		passed bool
		actual any // float64, or nil for no data
		reason string
	}{
		{"lua.overshoot==0", true, 0.0, ""},
		{"naive.overshoot==0", false, 7.0, ""},
		{"naive.overshoot>0", true, 7.0, ""},
		{"lua.p99<5ms", true, 4.0, ""},
		{"lua.p99<4ms", false, 4.0, ""},
		{"lua.p99<=4ms", true, 4.0, ""},
		{"lua.server_usec_per_call<20", true, 12.5, ""},
		{"eval.server_usec_per_call<20", false, nil, ""}, // no data is never a pass
		{"naive.errors!=0", false, 0.0, ""},
		// An overshoot of 0 where the limit was never reached is no evidence: never a pass.
		{"eval.overshoot==0", false, 0.0, NotContended},
		{"eval.overshoot_events<1", false, 0.0, NotContended},
		{"eval.attempts==0", true, 0.0, ""}, // other metrics need no contention
		{"lua.release_errors==0", false, 2.0, ""},
		{"eval.unjudged==3", true, 3.0, ""},
		{"lua.abandoned>0", true, 41.0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			a, err := ParseAssertion(tt.expr, []string{"naive", "lua", "eval"})
			if err != nil {
				t.Fatal(err)
			}
			res := a.Eval(sum)
			if res.Passed != tt.passed || res.Reason != tt.reason {
				t.Errorf("passed = %v (reason %q), want %v (reason %q)", res.Passed, res.Reason, tt.passed, tt.reason)
			}
			switch want := tt.actual.(type) {
			case nil:
				if res.Actual != nil {
					t.Errorf("actual = %v, want none", *res.Actual)
				}
			case float64:
				if res.Actual == nil || *res.Actual != want {
					t.Errorf("actual = %v, want %v", res.Actual, want)
				}
			}
		})
	}
}

func FuzzParseAssertion(f *testing.F) {
	for _, seed := range []string{"lua.overshoot==0", "naive.p99<5ms", "a.b<=c", "lua.p99.9>=1.5s", "==", "lua.=<>!0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		a, err := ParseAssertion(expr, []string{"lua", "naive"})
		if err != nil {
			return
		}
		if a.Op == "" || a.Strategy == "" || a.Metric == "" {
			t.Fatalf("accepted %q with an empty part: %+v", expr, a)
		}
		a.Eval(bench.Summary{Strategies: []bench.StrategySnapshot{{Name: "lua"}, {Name: "naive"}}})
	})
}
