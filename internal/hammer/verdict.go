package hammer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
)

// MaxErrorRate is the share of a strategy's decisions that may fail before the run does.
const MaxErrorRate = bench.MaxErrorRate

// ImpliedCheck is the assertion a run with --script makes when no --assert bounds the custom
// strategy's overshoot: a limiter script is hammered to verify it, so a run in which it
// overshot, or never reached its limit, must not pass. An --assert on custom.overshoot (or
// custom.overshoot_events) replaces it, e.g. the bound an approximate algorithm promises.
const ImpliedCheck = "custom.overshoot==0"

// withImpliedCheck returns o's assertions plus ImpliedCheck when o runs a custom script whose
// overshoot no assertion bounds.
func withImpliedCheck(o Options) []bench.Assertion {
	if o.ScriptSource == "" || !slices.Contains(o.Strategies, limiter.Custom) {
		return o.Assertions
	}
	for _, a := range o.Assertions {
		if a.Strategy == string(limiter.Custom) && (a.Metric == "overshoot" || a.Metric == "overshoot_events") {
			return o.Assertions
		}
	}
	a, err := bench.ParseAssertion(ImpliedCheck, []string{string(limiter.Custom)})
	if err != nil {
		panic("implied check: " + err.Error()) // a constant that parses
	}
	a.Implied = true
	return append(slices.Clip(o.Assertions), a)
}

// Judge evaluates assertions against a summary (or a live snapshot's numbers).
func Judge(assertions []bench.Assertion, sum bench.Summary) (results []bench.AssertionResult, passed bool) {
	results = make([]bench.AssertionResult, len(assertions))
	passed = true
	for i, a := range assertions {
		results[i] = a.Eval(sum)
		passed = passed && results[i].Passed
	}
	return results, passed
}

// verdict lists why a finished run fails: each failed assertion, then each strategy whose
// decisions errored too often (unless errors were asked for).
func verdict(o Options, sum bench.Summary, results []bench.AssertionResult) []string {
	var failures []string
	for _, r := range results {
		if r.Passed || (r.Implied && r.Reason == bench.NoEvidence && customErred(sum)) {
			continue // the implied check adds nothing to a strategy whose decisions failed: they say why
		}
		failures = append(failures, "assertion failed: "+DescribeAssertion(r))
	}
	if o.FailOpen || len(o.Injects) > 0 {
		return failures
	}
	for _, st := range sum.Strategies {
		if !st.TooManyErrors() {
			continue
		}
		hint := "pass --on-error open to run through errors"
		if st.Name == string(limiter.Custom) {
			// A custom script's calls fail for a contract that does not fit far more often than
			// for an outage; the first error sample says which.
			hint = "check --script-keys, --script-args and --script-allowed against the script (limitctl hammer --help)"
			if shippedContract(o) {
				hint = misfitHint(o)
			}
		}
		msg := fmt.Sprintf("%s: %d of %d decisions failed (%s%%, more than %g%%; %s)",
			st.Name, st.Errors, st.Attempts, strconv.FormatFloat(100*float64(st.Errors)/float64(st.Attempts), 'f', 1, 64), 100*MaxErrorRate, hint)
		if len(st.ErrorSamples) > 0 {
			msg += fmt.Sprintf(": %q", st.ErrorSamples[0].Message)
		}
		failures = append(failures, msg)
	}
	if shippedContract(o) {
		// Under the contract the user did not choose, admitting this little is a misfit, not a
		// strict limiter (redis_rate's GCRA reads now_ms as its period and admits one burst).
		if n := underAdmitted(o, sum); n != "" {
			failures = append(failures, n+"; "+misfitHint(o))
		}
	}
	return failures
}

// customErred reports whether the custom strategy's decisions failed more often than
// MaxErrorRate: they fail the run, or were asked for (--on-error open, --inject).
func customErred(sum bench.Summary) bool {
	for _, st := range sum.Strategies {
		if st.Name == string(limiter.Custom) && st.TooManyErrors() {
			return true
		}
	}
	return false
}

// DescribeAssertion is an assertion's outcome in words: "lua.overshoot==0 (actual 0; limit
// never reached: no evidence)".
func DescribeAssertion(r bench.AssertionResult) string {
	d := r.Expr + " (" + AssertionDetail(r) + ")"
	if r.Implied {
		d += ", the check every --script run makes; to accept a bound, say so with --assert 'custom.overshoot<=N'"
	}
	return d
}

// ActualText is the measured value, with the reason when the value alone does not say why it
// failed: "0; limit never reached: no evidence".
func ActualText(r bench.AssertionResult) string {
	if r.Reason != "" {
		return FormatActual(r.Actual) + "; " + r.Reason
	}
	return FormatActual(r.Actual)
}

// AssertionDetail is what was measured, and why it failed when the value alone does not say.
func AssertionDetail(r bench.AssertionResult) string {
	return "actual " + ActualText(r)
}

// FormatActual prints an assertion's measured value; none when the metric has no value.
func FormatActual(v *float64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// failureMessage joins the failures into the one line of a failed check.
func failureMessage(failures []string) string { return strings.Join(failures, "; ") }
