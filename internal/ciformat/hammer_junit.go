package ciformat

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
)

// HammerJUnit is a hammer run as JUnit XML: a suite "limitctl hammer" ("limitctl hammer report"
// for a merged run) whose properties say what ran (run id, target, limiter, limit, workers,
// duration, processes of a merged run...), a test case per assertion (classname
// hammer.assert, the expression as name; the check a --script run makes itself included) and one
// per strategy's verdict (classname hammer.verdict, the strategy as name, the verdict line as its
// output).
//
// The report fails exactly when the run does (exit 3): each of the run's failures is the failure
// of one test case, the assertion it names or the strategy it is about; any other (none today)
// gets a test case "run". An assertion that failed without failing the run (the check a --script
// run makes, when the strategy's decisions failed, which says why) is skipped. An interrupted run
// is an error.
func HammerJUnit(res hammer.Result, started time.Time, version string) ([]byte, error) {
	s := res.Summary
	elapsed := s.Duration
	unclaimed := slices.Clone(res.Failures)
	claim := func(match func(string) bool) []junitResult {
		var out []junitResult
		unclaimed = slices.DeleteFunc(unclaimed, func(f string) bool {
			if !match(f) {
				return false
			}
			out = append(out, junitResult{Message: f, Type: "check", Text: f})
			return true
		})
		return out
	}
	var cases []junitCase
	for _, a := range res.Assertions {
		c := junitCase{Classname: "hammer.assert", Name: a.Expr, Time: seconds(0), SystemOut: hammer.DescribeAssertion(a) + "\n"}
		line := "assertion failed: " + hammer.DescribeAssertion(a)
		c.Failures = claim(func(f string) bool { return f == line })
		if len(c.Failures) == 0 && !a.Passed {
			reason := "not judged: " + hammer.DescribeAssertion(a) + "; the strategy's decisions failed, which its verdict reports"
			c.Skipped = &junitResult{Message: reason, Text: reason}
		}
		cases = append(cases, c)
	}
	lines := verdictLines(res)
	for i, st := range s.Strategies {
		c := junitCase{Classname: "hammer.verdict", Name: st.Name, Time: seconds(elapsed), SystemOut: lines[i] + "\n"}
		c.Failures = claim(func(f string) bool {
			rest, ok := strings.CutPrefix(f, st.Name)
			return ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " "))
		})
		cases = append(cases, c)
	}
	if len(unclaimed) > 0 || res.Interrupted {
		c := junitCase{Classname: "hammer", Name: "run", Time: seconds(elapsed), Failures: claim(func(string) bool { return true })}
		if res.Interrupted {
			msg := fmt.Sprintf("interrupted after %s: the results are partial", human.Elapsed(s.Duration))
			c.Errors = []junitResult{{Message: msg, Type: "interrupted", Text: msg}}
		}
		cases = append(cases, c)
	}
	props := []junitProperty{
		{"limitctl_version", version},
		{"run_id", s.RunID},
		{"target", strings.TrimSpace(s.Target.Kind + " " + s.Target.Addr)},
		{"limiter", string(s.Limiter)},
		{"limit", strconv.FormatInt(s.Limit, 10)},
		{"workers", strconv.Itoa(s.Workers)},
		{"duration_s", strconv.FormatFloat(s.Duration.Seconds(), 'f', 3, 64)},
		{"profile", cmp.Or(res.Options.Profile, limiter.ProfileSteady)},
		{"strategies", strings.Join(strategyNames(res), ",")},
	}
	if s.Processes > 0 {
		props = append(props, junitProperty{"processes", strconv.Itoa(s.Processes)})
	}
	return junitDocument(junitSuiteOf("limitctl "+hammerCommand(s), started, elapsed, props, cases))
}

// hammerCommand names the command that judged s: hammer report for a run merged from the
// processes that shared it, else hammer.
func hammerCommand(s bench.Summary) string {
	if s.Processes > 0 {
		return "hammer report"
	}
	return "hammer"
}

func strategyNames(res hammer.Result) []string {
	names := make([]string, len(res.Summary.Strategies))
	for i, st := range res.Summary.Strategies {
		names[i] = st.Name
	}
	return names
}

// HammerReports are what CI reads of a hammer run or of hammer report's merged run: its JUnit
// report and the Markdown section of its step summary. A command (hammer, hammer report) that
// ended without a result (runErr) is reported as a JUnit error, or a failure when it failed a
// check before any load (failed: the script's lint, exit 3).
func HammerReports(command string, res hammer.Result, runErr error, failed bool, started time.Time, elapsed time.Duration, version string) (junit, summary []byte, err error) {
	if runErr != nil {
		junit, err = ErrorJUnit(command, started, elapsed, runErr, failed)
		return junit, ErrorStepSummary(command, runErr, failed), err
	}
	junit, err = HammerJUnit(res, started, version)
	return junit, HammerStepSummary(res), err
}
