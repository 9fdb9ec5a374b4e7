package hammer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/hammer/inject"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

func assertions(t *testing.T, strategies []string, exprs ...string) []verdict.Assertion {
	t.Helper()
	var out []verdict.Assertion
	for _, e := range exprs {
		a, err := verdict.ParseAssertion(e, strategies)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

func wantCheckFailure(t *testing.T, res Result, fragments ...string) {
	t.Helper()
	var check *exitcode.CheckFailedError
	if err := res.Err(); !errors.As(err, &check) {
		t.Fatalf("err %v, want a check failure (exit 3)", err)
	}
	for _, f := range fragments {
		if !strings.Contains(res.Err().Error(), f) {
			t.Errorf("%q does not say %q", res.Err(), f)
		}
	}
	if res.Passed() {
		t.Error("Passed with a failure")
	}
}

// Four workers never fill a limit of 1000: lua.overshoot==0 is then no evidence of anything.
func TestOvershootAssertionWithoutContentionFails(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	o.Strategies, o.Workers, o.Limit = []limiter.Strategy{limiter.Lua}, 4, 1000
	o.Assertions = assertions(t, []string{"lua"}, "lua.overshoot==0", "lua.admitted>0")
	res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Summary.Strategies[0]
	if st.Contended || st.Rejected != 0 {
		t.Fatalf("contended %v rejected %d peak %d with 4 workers under 1000", st.Contended, st.Rejected, st.Peak)
	}
	wantCheckFailure(t, res, "lua.overshoot==0 (actual 0; limit never reached: no evidence)")
	if !res.Assertions[1].Passed {
		t.Errorf("lua.admitted>0 failed: %+v", res.Assertions[1])
	}

	// The same strategy contended (limit 2 under 16 workers) passes.
	o.Workers, o.Limit = 16, 2
	res, err = Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.Strategies[0].Contended || res.Err() != nil {
		t.Fatalf("contended %v err %v", res.Summary.Strategies[0].Contended, res.Err())
	}
}

// A strategy whose every decision errors describes an outage, not the limiter: the run fails
// and says what the errors were, unless errors were asked for.
func TestErrorsOnMoreThanOnePercentFailTheRun(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	o.Strategies = []limiter.Strategy{limiter.Lua, limiter.Custom}
	o.Script, o.ScriptSource, o.NoLint = "boom.lua", "return redis.error_reply('boom: not today')\n", true
	run := func(o Options) Result {
		t.Helper()
		res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(o)
	custom := res.Summary.Strategies[1]
	if custom.Errors != 400 || len(custom.ErrorSamples) != 1 || custom.ErrorSamples[0].Count != 400 ||
		!strings.Contains(custom.ErrorSamples[0].Message, "boom: not today") {
		t.Fatalf("custom errors %d samples %+v", custom.Errors, custom.ErrorSamples)
	}
	wantCheckFailure(t, res, "custom: 400 of 400 decisions failed (100.0%", "boom: not today")
	if len(res.Failures) != 1 {
		t.Errorf("failures %q, want only custom's", res.Failures)
	}

	o.FailOpen = true
	if res := run(o); res.Err() != nil || !res.Passed() {
		t.Errorf("--on-error open: %v", res.Err())
	}
	o.FailOpen = false
	o.Injects = []inject.Event{{Kind: "flush-scripts", At: time.Hour}}
	if res := run(o); res.Err() != nil {
		t.Errorf("with --inject: %v", res.Err())
	}
}

// hammer report judges the merged run by the rules its processes ran under: their assertions
// when it is given none, its own in their place when it is, and an assertion on a strategy
// the run did not have is a usage error.
func TestReportJudgesByTheRulesOfTheRun(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	o.RunID, o.RedisWitness, o.KeepKeys = "judged", true, true
	o.Assertions = assertions(t, []string{"naive", "lua"}, "lua.attempts>1000000")
	res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wantCheckFailure(t, res, "assertion failed: lua.attempts>1000000 (actual 400)")
	rdb := srv.Client(t)
	report, err := Report(context.Background(), rdb, "limitctl", "judged", nil)
	if err != nil {
		t.Fatal(err)
	}
	if report.Summary.Processes != 1 || !slices.Equal(report.Failures, res.Failures) {
		t.Fatalf("report of one process: processes %d failures %q, want the run's %q", report.Summary.Processes, report.Failures, res.Failures)
	}
	if !slices.Equal(report.Verdicts, res.Verdicts) {
		t.Errorf("report verdicts %+v, the run's %+v", report.Verdicts, res.Verdicts)
	}
	report, err = Report(context.Background(), rdb, "limitctl", "judged", []string{"lua.attempts>0"})
	if err != nil || !report.Passed() || len(report.Assertions) != 1 || report.Assertions[0].Expr != "lua.attempts>0" {
		t.Fatalf("report with its own assertion: err %v, %+v", err, report.Judgement)
	}
	_, err = Report(context.Background(), rdb, "limitctl", "judged", []string{"custom.overshoot==0"})
	if c, ok := err.(exitcode.Coder); !ok || c.ExitCode() != exitcode.Usage {
		t.Errorf("an assertion on a strategy the run did not have: %v, want a usage error", err)
	}
}
