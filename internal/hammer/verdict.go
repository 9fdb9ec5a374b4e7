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

// ImpliedChecks are the assertions a run with --script makes when no --assert bounds the
// custom strategy's metric: a limiter script is hammered to verify it, so a run in which it
// overshot, never reached its limit, or refused while it certainly had room must not pass. An
// --assert on custom.overshoot (or custom.overshoot_events) replaces the first, one on
// custom.false_rejects the second, e.g. the bounds an approximate algorithm promises. A run
// with a run id judges no refusals (other processes may share its keys), so it implies no
// false-reject check.
var ImpliedChecks = []struct {
	Expr    string
	Metrics []string // an assertion on any of these replaces it
	Refusal bool     // it needs the refusals judged
}{
	{"custom.overshoot==0", []string{"overshoot", "overshoot_events"}, false},
	{"custom.false_rejects==0", []string{"false_rejects"}, true},
}

// withImpliedCheck returns o's assertions plus each of ImpliedChecks that no assertion on the
// custom strategy replaces, when o runs a custom script.
func withImpliedCheck(o Options) []bench.Assertion {
	if o.ScriptSource == "" || !slices.Contains(o.Strategies, limiter.Custom) {
		return o.Assertions
	}
	out := o.Assertions
	for _, implied := range ImpliedChecks {
		replaced := implied.Refusal && o.RunID != ""
		for _, a := range o.Assertions {
			replaced = replaced || (a.Strategy == string(limiter.Custom) && slices.Contains(implied.Metrics, a.Metric))
		}
		if replaced {
			continue
		}
		a, err := bench.ParseAssertion(implied.Expr, []string{string(limiter.Custom)})
		if err != nil {
			panic("implied check: " + err.Error()) // a constant that parses
		}
		a.Implied = true
		out = append(slices.Clip(out), a)
	}
	return out
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
		metric, _, _ := strings.Cut(strings.TrimPrefix(r.Expr, "custom."), "==")
		d += fmt.Sprintf(", the check every --script run makes; to accept a bound, say so with --assert 'custom.%s<=N'", metric)
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
