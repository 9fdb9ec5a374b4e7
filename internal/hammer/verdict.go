package hammer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

// MaxErrorRate is the share of a strategy's decisions that may fail before the run does.
const MaxErrorRate = verdict.MaxErrorRate

// ImpliedChecks are the assertions a run with --script makes when no --assert bounds the
// custom strategy's metric (and a run with --http on each target: NAME for custom, the leaks
// check only where --http-keys names the target's keys): a limiter is hammered to verify it, so a run in which it
// overshot, never reached its limit, was not judged, refused while it certainly had room, or
// left keys that never expire must not pass. An --assert on custom.overshoot (or
// custom.overshoot_events) replaces the first, one on custom.false_rejects the second, e.g. the
// bounds an approximate algorithm promises, one on custom.leaks the third (a library's
// permanent configuration key: --assert 'custom.leaks>=0'). A run
// with a run id judges no refusals (other processes may share its keys), nor does one whose
// contract makes refusals no evidence (contract.Spec.RefusalsUnjudged: a schedule), so neither
// implies a false-reject check.
var ImpliedChecks = []struct {
	Expr    string
	Metrics []string // an assertion on any of these replaces it
	Refusal bool     // it needs the refusals judged
}{
	{"custom.overshoot==0", []string{"overshoot", "overshoot_events"}, false},
	{"custom.false_rejects==0", []string{"false_rejects"}, true},
	{"custom.leaks==0", []string{"leaks"}, false},
}

// Rules are what a finished run is judged by besides its numbers: what the user asked for
// (the assertions; errors, with --on-error open or --inject) and what ran (the limiter, the
// user's script under its contract, alone or sharing its keys). Every process of a shared run
// leaves them with its summary, so that hammer report judges the merged run as hammer judges
// one.
type Rules struct {
	Limiter limiter.Kind
	// Script: the custom strategy ran the user's --script; Contract is the calling contract as
	// the user gave it (contract.Contract.Given: a template left empty is the shipped one's; nil:
	// none given).
	Script   bool
	Contract *contract.Spec
	// ErrorsAsked lifts the error-rate rule: --on-error open or --inject asked for errors.
	ErrorsAsked bool
	// Shared: the run has a run id, so other processes may share its keys and its refusals are
	// not judged; no false-reject check is implied.
	Shared bool
	// Assertions are the --assert thresholds as given; Judge adds the implied checks.
	Assertions []verdict.Assertion
	// Recorded: the calls are judged from their records (judge), where every verdict but exact
	// fails the run by itself (recordedFailure), as the implied checks fail a run's.
	Recorded bool
	// HTTP are the run's HTTP targets, each checked as a --script run's custom strategy is.
	HTTP []ImpliedHTTP `json:",omitempty"`
}

// ImpliedHTTP is what an HTTP target's implied checks need: its name, whether its refusals are
// judged (every request names {key}) and whether its limiter's keys are read (--http-keys).
type ImpliedHTTP struct {
	Name           string
	RefusalsJudged bool
	KeysRead       bool
}

// Rules are the rules a run of o is judged by.
func (o Options) Rules() Rules {
	r := Rules{Limiter: o.Limiter, Script: o.ScriptSource != "",
		ErrorsAsked: o.FailOpen || len(o.Injects) > 0, Shared: o.RunID != "", Assertions: o.Assertions}
	if o.Contract != nil {
		given := o.Contract.Given
		r.Contract = &given
	}
	for _, t := range o.HTTP {
		r.HTTP = append(r.HTTP, ImpliedHTTP{Name: t.Name, RefusalsJudged: t.UsesKey, KeysRead: t.KeysPattern != ""})
	}
	return r
}

// Judgement is the verdict on a finished run, the same for hammer and hammer report.
type Judgement struct {
	// Assertions are every assertion's outcome, the implied check included.
	Assertions []verdict.AssertionResult
	// Verdicts are each strategy's, in the summary's order: the word and the numbers behind it
	// that the verdict lines, the JSON and the HTML report show.
	Verdicts []verdict.Verdict
	// Failures say why the run fails (each failed assertion, each strategy whose decisions
	// errored on more than MaxErrorRate of them); empty when it passed.
	Failures []string
}

// Passed reports whether the run passed: nothing failed.
func (j Judgement) Passed() bool { return len(j.Failures) == 0 }

// Judge is the one verdict on a finished run: the assertions, with the implied checks of a
// --script run; each strategy's verdict (exact, OVERSHOOT, TOO STRICT, ...); the error-rate
// rule. hammer judges its own run with it, and hammer report the merged run of every process.
// A script that admits little is not diagnosed as a misfit here: where it refused with room,
// its false rejects are the verdict; a contract that does not fit shows in error samples and
// in replies the contract cannot read.
func Judge(r Rules, sum bench.Summary) Judgement {
	var j Judgement
	j.Assertions = Evaluate(r.assertions(strategyNames(sum)), sum)
	for _, st := range sum.Strategies {
		j.Verdicts = append(j.Verdicts, verdict.Judge(st, sum.Limiter, sum.Limit, sum.Duration))
	}
	for _, a := range j.Assertions {
		if a.Passed || (a.Implied && (a.Reason == verdict.NotContended || a.Actual == nil) && erred(sum, a.Expr)) {
			continue // the implied check adds nothing to a strategy whose decisions failed: they say why
		}
		j.Failures = append(j.Failures, "assertion failed: "+DescribeAssertion(a))
	}
	if r.Recorded {
		for i, v := range j.Verdicts {
			if failure := recordedFailure(sum.Strategies[i].Name, v); failure != "" {
				j.Failures = append(j.Failures, failure)
			}
		}
	}
	if !r.ErrorsAsked {
		for _, st := range sum.Strategies {
			if verdict.TooManyErrors(st) {
				j.Failures = append(j.Failures, r.tooManyErrors(st))
			}
		}
	}
	return j
}

// recordedFailure is why a group judge read fails the run, "" when its verdict is exact: a
// verdict means what it means in a run (hammer --http checks each target's overshoot and false
// rejects itself, and a strategy never contended or not judged fails those checks), so anything
// but exact is a failure, the limiter proven wrong or the records unable to prove it right.
func recordedFailure(name string, v verdict.Verdict) string {
	switch {
	case v.Tone() == verdict.ToneGood:
		return ""
	case v.Tone() == verdict.ToneBad:
		return fmt.Sprintf("%s: %s proven", name, v.Word)
	}
	return fmt.Sprintf("%s: %s: %s", name, v.Word, v.Text)
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

// assertions are r's assertions plus each of ImpliedChecks that no assertion on the custom
// strategy replaces, when the user's script ran as strategy custom (one of strategies).
func (r Rules) assertions(strategies []string) []verdict.Assertion {
	subjects := r.HTTP
	if r.Script && slices.Contains(strategies, string(limiter.Custom)) {
		refusals := !r.Shared && (r.Contract == nil || r.Contract.RefusalsUnjudged() == "")
		subjects = append([]ImpliedHTTP{{Name: string(limiter.Custom), RefusalsJudged: refusals, KeysRead: true}}, subjects...)
	}
	out := r.Assertions
	for _, subject := range subjects {
		if !slices.Contains(strategies, subject.Name) {
			continue
		}
		for _, implied := range ImpliedChecks {
			replaced := implied.Refusal && !subject.RefusalsJudged || implied.Expr == "custom.leaks==0" && !subject.KeysRead
			for _, a := range r.Assertions {
				replaced = replaced || (a.Strategy == subject.Name && slices.Contains(implied.Metrics, a.Metric))
			}
			if replaced {
				continue
			}
			expr := subject.Name + strings.TrimPrefix(implied.Expr, string(limiter.Custom))
			a, err := verdict.ParseAssertion(expr, []string{subject.Name})
			if err != nil {
				panic("implied check: " + err.Error()) // a constant that parses
			}
			a.Implied = true
			out = append(slices.Clip(out), a)
		}
	}
	return out
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
func Evaluate(assertions []verdict.Assertion, sum bench.Summary) []verdict.AssertionResult {
	results := make([]verdict.AssertionResult, len(assertions))
	for i, a := range assertions {
		results[i] = a.Eval(sum)
	}
	return results
}

// erred reports whether the decisions of the strategy an implied check names (its expression's
// strategy) failed more often than MaxErrorRate: they fail the run, or were asked for
// (--on-error open, --inject).
func erred(sum bench.Summary, expr string) bool {
	name, _, _ := strings.Cut(expr, ".")
	for _, st := range sum.Strategies {
		if st.Name == name && verdict.TooManyErrors(st) {
			return true
		}
	}
	return false
}

// DescribeAssertion is an assertion's outcome in words: "lua.overshoot==0 (actual 0; limit
// never reached: no evidence)".
func DescribeAssertion(r verdict.AssertionResult) string {
	d := r.Expr + " (" + AssertionDetail(r) + ")"
	if r.Implied {
		strategy, rest, _ := strings.Cut(r.Expr, ".")
		metric, _, _ := strings.Cut(rest, "==")
		flag := "--script"
		if strategy != string(limiter.Custom) {
			flag = "--http"
		}
		d += fmt.Sprintf(", the check every %s run makes; to accept a bound, say so with --assert '%s.%s<=N'", flag, strategy, metric)
	}
	return d
}

// ActualText is the measured value, with the reason when the value alone does not say why it
// failed: "0; limit never reached: no evidence".
func ActualText(r verdict.AssertionResult) string {
	if r.Reason != "" {
		return FormatActual(r.Actual) + "; " + r.Reason
	}
	return FormatActual(r.Actual)
}

// AssertionDetail is what was measured, and why it failed when the value alone does not say.
func AssertionDetail(r verdict.AssertionResult) string {
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
