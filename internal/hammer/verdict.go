package hammer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/limitctl/limitctl/internal/bench"
)

// MaxErrorRate is the share of a strategy's decisions that may fail before the run does.
const MaxErrorRate = bench.MaxErrorRate

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
		if !r.Passed {
			failures = append(failures, "assertion failed: "+DescribeAssertion(r))
		}
	}
	if o.FailOpen || len(o.Injects) > 0 {
		return failures
	}
	for _, st := range sum.Strategies {
		if !st.TooManyErrors() {
			continue
		}
		msg := fmt.Sprintf("%s: %d of %d decisions failed (%s%%, more than %g%%; pass --on-error open to run through errors)",
			st.Name, st.Errors, st.Attempts, strconv.FormatFloat(100*float64(st.Errors)/float64(st.Attempts), 'f', 1, 64), 100*MaxErrorRate)
		if len(st.ErrorSamples) > 0 {
			msg += fmt.Sprintf(": %q", st.ErrorSamples[0].Message)
		}
		failures = append(failures, msg)
	}
	return failures
}

// DescribeAssertion is an assertion's outcome in words: "lua.overshoot==0 (actual 0; limit
// never reached: no evidence)".
func DescribeAssertion(r bench.AssertionResult) string {
	return r.Expr + " (" + AssertionDetail(r) + ")"
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
