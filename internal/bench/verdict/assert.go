package verdict

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
)

// Assertion is a threshold on one strategy's metric, k6-style: "lua.overshoot==0",
// "naive.overshoot>0", "lua.p99<5ms". A failed assertion makes the hammer exit 3.
type Assertion struct {
	Expr     string
	Strategy string
	Metric   string
	Op       string
	Value    float64 // latency metrics in milliseconds
	// Implied: not given with --assert but made by the run itself (a --script run's overshoot
	// check); its result says so, so a failure names where it came from.
	Implied bool
}

// AssertionResult is an assertion evaluated against a summary. Actual is nil when the metric
// has no value (server time the server does not report). Reason says why an assertion failed
// whatever its value: an overshoot measured where the limit was never reached.
type AssertionResult struct {
	Expr   string   `json:"expr"`
	Passed bool     `json:"passed"`
	Actual *float64 `json:"actual"`
	Reason string   `json:"reason,omitempty"`
	// Implied is true for a check the run made without --assert (see Assertion.Implied).
	Implied bool `json:"implied,omitempty"`
}

// NotContended is the reason an overshoot assertion fails on a strategy that never reached its
// limit: 0 overshoot there proves nothing about the limiter.
const NotContended = "limit never reached: no evidence"

// needsContention lists the metrics that mean something only once the limit was reached.
func needsContention(metric string) bool {
	return metric == "overshoot" || metric == "overshoot_events"
}

// metrics maps every assertable name to its reader; latency metrics read milliseconds.
var metrics = map[string]func(bench.StrategySnapshot) *float64{
	"attempts":             count(func(s bench.StrategySnapshot) int64 { return s.Attempts }),
	"admitted":             count(func(s bench.StrategySnapshot) int64 { return s.Admitted }),
	"rejected":             count(func(s bench.StrategySnapshot) int64 { return s.Rejected }),
	"errors":               count(func(s bench.StrategySnapshot) int64 { return s.Errors }),
	"retries":              count(func(s bench.StrategySnapshot) int64 { return s.Retries }),
	"peak":                 count(func(s bench.StrategySnapshot) int64 { return s.Peak }),
	"overshoot":            count(func(s bench.StrategySnapshot) int64 { return s.Overshoot }),
	"overshoot_events":     count(func(s bench.StrategySnapshot) int64 { return s.OvershootEvent }),
	"false_rejects":        falseRejects,
	"leaks":                leaks,
	"fail_open_admits":     count(func(s bench.StrategySnapshot) int64 { return s.FailOpenAdmits }),
	"fail_closed_rejects":  count(func(s bench.StrategySnapshot) int64 { return s.FailClosedRejects }),
	"release_errors":       count(func(s bench.StrategySnapshot) int64 { return s.ReleaseErrors }),
	"abandoned":            count(func(s bench.StrategySnapshot) int64 { return s.Abandoned }),
	"unjudged":             count(func(s bench.StrategySnapshot) int64 { return s.Unjudged }),
	"throughput":           value(func(s bench.StrategySnapshot) float64 { return s.AvgThroughput }),
	"throughput_per_s":     value(func(s bench.StrategySnapshot) float64 { return s.AvgThroughput }),
	"p50":                  millis(func(l bench.Latency) time.Duration { return l.P50 }),
	"p90":                  millis(func(l bench.Latency) time.Duration { return l.P90 }),
	"p99":                  millis(func(l bench.Latency) time.Duration { return l.P99 }),
	"p999":                 millis(func(l bench.Latency) time.Duration { return l.P999 }),
	"p99.9":                millis(func(l bench.Latency) time.Duration { return l.P999 }),
	"max":                  millis(func(l bench.Latency) time.Duration { return l.Max }),
	"server_usec_per_call": func(s bench.StrategySnapshot) *float64 { return s.ServerUsecPerCall },
}

// falseRejects has no value where no refusal was judged: no data is never a pass.
func falseRejects(s bench.StrategySnapshot) *float64 {
	if s.NoRefusalJudged {
		return nil
	}
	v := float64(s.FalseRejects)
	return &v
}

// leaks has no value where the run's keys were not read.
func leaks(s bench.StrategySnapshot) *float64 {
	if s.Leaks == nil {
		return nil
	}
	v := float64(s.Leaks.Total())
	return &v
}

func isLatency(metric string) bool {
	switch metric {
	case "p50", "p90", "p99", "p999", "p99.9", "max":
		return true
	}
	return false
}

func count(f func(bench.StrategySnapshot) int64) func(bench.StrategySnapshot) *float64 {
	return func(s bench.StrategySnapshot) *float64 { v := float64(f(s)); return &v }
}

func value(f func(bench.StrategySnapshot) float64) func(bench.StrategySnapshot) *float64 {
	return func(s bench.StrategySnapshot) *float64 { v := f(s); return &v }
}

func millis(f func(bench.Latency) time.Duration) func(bench.StrategySnapshot) *float64 {
	return func(s bench.StrategySnapshot) *float64 {
		v := float64(f(s.Latency)) / float64(time.Millisecond)
		return &v
	}
}

// MetricNames lists what an assertion may test, for help text and completion.
func MetricNames() []string {
	return []string{"attempts", "admitted", "rejected", "errors", "retries", "peak", "overshoot", "overshoot_events",
		"false_rejects", "leaks", "throughput", "p50", "p90", "p99", "p999", "max", "server_usec_per_call", "fail_open_admits", "fail_closed_rejects",
		"release_errors", "unjudged", "abandoned"}
}

var operators = []string{"==", "!=", "<=", ">=", "<", ">"} // two-character ones first

// ParseAssertion parses "strategy.metric OP value"; strategies are the ones in the run, so a
// typo is caught before any load is sent.
func ParseAssertion(expr string, strategies []string) (Assertion, error) {
	a := Assertion{Expr: strings.TrimSpace(expr)}
	if a.Expr == "" {
		return a, fmt.Errorf("empty assertion")
	}
	opAt := -1
	for i := 0; i < len(a.Expr) && opAt < 0; i++ {
		for _, op := range operators {
			if strings.HasPrefix(a.Expr[i:], op) {
				opAt, a.Op = i, op
				break
			}
		}
	}
	if opAt < 0 {
		return a, fmt.Errorf("assertion %q has no comparison (want strategy.metric OP value with OP one of == != < <= > >=)", expr)
	}
	left := strings.TrimSpace(a.Expr[:opAt])
	right := strings.TrimSpace(a.Expr[opAt+len(a.Op):])
	strategy, metric, ok := strings.Cut(left, ".")
	if !ok || strategy == "" || metric == "" {
		return a, fmt.Errorf("assertion %q: left side must be strategy.metric, e.g. lua.overshoot", expr)
	}
	a.Strategy, a.Metric = strategy, strings.ToLower(metric)
	if !slices.Contains(strategies, a.Strategy) {
		return a, fmt.Errorf("assertion %q: strategy %q is not in this run (running: %s)", expr, a.Strategy, strings.Join(strategies, ", "))
	}
	if _, ok := metrics[a.Metric]; !ok {
		return a, fmt.Errorf("assertion %q: unknown metric %q (known: %s)", expr, metric, strings.Join(MetricNames(), ", "))
	}
	if right == "" {
		return a, fmt.Errorf("assertion %q has no value after %s", expr, a.Op)
	}
	if strings.ContainsAny(right, "=<>!") {
		return a, fmt.Errorf("assertion %q: bad value %q", expr, right)
	}
	v, err := parseValue(right, isLatency(a.Metric))
	if err != nil {
		return a, fmt.Errorf("assertion %q: %v", expr, err)
	}
	a.Value = v
	return a, nil
}

// parseValue reads a number, or for latency a duration ("5ms", "1.5s", "250us"); a bare
// number for latency means milliseconds.
func parseValue(s string, latency bool) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("value %q is not a finite number", s)
		}
		return v, nil
	}
	if !latency {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "µs", "us"))
	if err != nil {
		return 0, fmt.Errorf("value %q is not a duration (e.g. 5ms, 250us, 1.5s)", s)
	}
	return float64(d) / float64(time.Millisecond), nil
}

// Eval tests the assertion against a run's summary.
func (a Assertion) Eval(sum bench.Summary) AssertionResult {
	res := AssertionResult{Expr: a.Expr, Implied: a.Implied}
	for _, s := range sum.Strategies {
		if s.Name != a.Strategy {
			continue
		}
		actual := metrics[a.Metric](s)
		res.Actual = actual
		if actual == nil {
			switch a.Metric {
			case "false_rejects":
				res.Reason = "refusals not judged: " + s.RefusalsUnjudged
			case "leaks":
				res.Reason = "keys not read: " + s.LeftoversUnread
			}
			return res // no data is never a pass
		}
		if needsContention(a.Metric) && !s.Contended {
			res.Reason = NotContended
			return res
		}
		if why := WhyNotJudged(s, sum.Limiter, sum.Limit); needsContention(a.Metric) && why != "" {
			res.Reason = NotJudged + ": " + why
			return res
		}
		v := *actual
		switch a.Op {
		case "==":
			res.Passed = v == a.Value
		case "!=":
			res.Passed = v != a.Value
		case "<":
			res.Passed = v < a.Value
		case "<=":
			res.Passed = v <= a.Value
		case ">":
			res.Passed = v > a.Value
		case ">=":
			res.Passed = v >= a.Value
		}
		if !res.Passed && a.Metric == "false_rejects" && s.FalseRejects > 0 {
			res.Reason = tooStrict(s, sum.Limiter) // what the refusals were counted against
		}
		if !res.Passed && a.Metric == "leaks" && s.Leaks.Total() > 0 {
			res.Reason = leaksText(*s.Leaks)
		}
		return res
	}
	return res
}
