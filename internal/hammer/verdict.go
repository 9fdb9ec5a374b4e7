package hammer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

// MaxErrorRate is the share of a strategy's decisions that may fail before the run does.
const MaxErrorRate = bench.MaxErrorRate

// ImpliedCheck is the assertion a run with --script makes when no --assert bounds the custom
// strategy's overshoot: a limiter script is hammered to verify it, so a run in which it
// overshot, or never reached its limit, must not pass. An --assert on custom.overshoot (or
// custom.overshoot_events) replaces it, e.g. the bound an approximate algorithm promises.
const ImpliedCheck = "custom.overshoot==0"

// Rules are what a finished run is judged by besides its numbers: what the user asked for
// (the assertions; errors, with --on-error open or --inject) and what ran (the limiter, the
// user's script under its contract, the load's shape). Every process of a shared run leaves
// them with its summary, so that hammer report judges the merged run as hammer judges one.
type Rules struct {
	Limiter limiter.Kind
	Limit   int64
	Window  time.Duration
	Profile string
	// Script: the custom strategy ran the user's --script; Contract is the calling contract as
	// the user gave it (contract.Contract.Given: a template left empty is the shipped one's; nil:
	// none given).
	Script   bool
	Contract *contract.Spec
	// ErrorsAsked lifts the error-rate rule: --on-error open or --inject asked for errors.
	ErrorsAsked bool
	// Assertions are the --assert thresholds as given; Judge adds the implied check.
	Assertions []bench.Assertion
}

// Rules are the rules a run of o is judged by.
func (o Options) Rules() Rules {
	r := Rules{Limiter: o.Limiter, Limit: o.Limit, Window: o.Window, Profile: o.Profile, Script: o.ScriptSource != "",
		ErrorsAsked: o.FailOpen || len(o.Injects) > 0, Assertions: o.Assertions}
	if o.Contract != nil {
		given := o.Contract.Given
		r.Contract = &given
	}
	return r
}

// Judgement is the verdict on a finished run, the same for hammer and hammer report.
type Judgement struct {
	// Assertions are every assertion's outcome, the implied check included.
	Assertions []bench.AssertionResult
	// Verdicts are each strategy's, in the summary's order: the word and the numbers behind it
	// that the verdict lines, the JSON and the HTML report show.
	Verdicts []bench.Verdict
	// Failures say why the run fails (each failed assertion, each strategy whose decisions
	// errored on more than MaxErrorRate of them, a script that does not fit the shipped
	// contract); empty when it passed.
	Failures []string
	// Notices are what a person should know that does not fail the run.
	Notices []string
}

// Passed reports whether the run passed: nothing failed.
func (j Judgement) Passed() bool { return len(j.Failures) == 0 }

// Judge is the one verdict on a finished run: the assertions, with the implied check of a
// --script run; each strategy's verdict; the error-rate rule; and, under a contract the user
// did not choose, a script that admitted too little to be the limiter at work. hammer judges
// its own run with it, and hammer report the merged run of every process.
func Judge(r Rules, sum bench.Summary) Judgement {
	var j Judgement
	j.Assertions = Evaluate(r.assertions(strategyNames(sum)), sum)
	for _, st := range sum.Strategies {
		j.Verdicts = append(j.Verdicts, st.Judge(sum.Limit, sum.Duration))
	}
	for _, a := range j.Assertions {
		if a.Passed || (a.Implied && a.Reason == bench.NoEvidence && customErred(sum)) {
			continue // the implied check adds nothing to a strategy whose decisions failed: they say why
		}
		j.Failures = append(j.Failures, "assertion failed: "+DescribeAssertion(a))
	}
	if !r.ErrorsAsked {
		for _, st := range sum.Strategies {
			if st.TooManyErrors() {
				j.Failures = append(j.Failures, r.tooManyErrors(st))
			}
		}
	}
	if n := underAdmitted(r, sum); n != "" {
		if r.shippedContract() {
			// Under the contract the user did not choose, admitting this little is a misfit, not a
			// strict limiter (redis_rate's GCRA reads now_ms as its period and admits one burst).
			j.Failures = append(j.Failures, n+"; "+misfitHint(r.Limiter))
		} else {
			j.Notices = append(j.Notices, "notice: "+n+": if the limiter is not that strict, check --script-args and --script-allowed")
		}
	}
	return j
}

// tooManyErrors says that a strategy's decisions failed too often, with what to do about it.
func (r Rules) tooManyErrors(st bench.StrategySnapshot) string {
	hint := "pass --on-error open to run through errors"
	if st.Name == string(limiter.Custom) {
		// A custom script's calls fail for a contract that does not fit far more often than
		// for an outage; the first error sample says which.
		hint = "check --script-keys, --script-args and --script-allowed against the script (limitctl hammer --help)"
		if r.shippedContract() {
			hint = misfitHint(r.Limiter)
		}
	}
	msg := fmt.Sprintf("%s: %d of %d decisions failed (%s%%, more than %g%%; %s)",
		st.Name, st.Errors, st.Attempts, strconv.FormatFloat(100*float64(st.Errors)/float64(st.Attempts), 'f', 1, 64), 100*MaxErrorRate, hint)
	if len(st.ErrorSamples) > 0 {
		msg += fmt.Sprintf(": %q", st.ErrorSamples[0].Message)
	}
	return msg
}

// assertions are r's assertions plus ImpliedCheck when the user's script ran as strategy
// custom (one of strategies) and no assertion bounds its overshoot.
func (r Rules) assertions(strategies []string) []bench.Assertion {
	if !r.Script || !slices.Contains(strategies, string(limiter.Custom)) {
		return r.Assertions
	}
	for _, a := range r.Assertions {
		if a.Strategy == string(limiter.Custom) && (a.Metric == "overshoot" || a.Metric == "overshoot_events") {
			return r.Assertions
		}
	}
	a, err := bench.ParseAssertion(ImpliedCheck, []string{string(limiter.Custom)})
	if err != nil {
		panic("implied check: " + err.Error()) // a constant that parses
	}
	a.Implied = true
	return append(slices.Clip(r.Assertions), a)
}

// strategyNames are the names of the summary's strategies, in its order.
func strategyNames(sum bench.Summary) []string {
	names := make([]string, len(sum.Strategies))
	for i, st := range sum.Strategies {
		names[i] = st.Name
	}
	return names
}

// Evaluate tests assertions against a summary, or a live snapshot's numbers (the dashboard).
func Evaluate(assertions []bench.Assertion, sum bench.Summary) []bench.AssertionResult {
	results := make([]bench.AssertionResult, len(assertions))
	for i, a := range assertions {
		results[i] = a.Eval(sum)
	}
	return results
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
