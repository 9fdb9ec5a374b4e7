package hammer

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

func strictScript(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("../../testdata/limiters/strict/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// A --script run fails on a too-strict limiter without any --assert: the implied
// custom.false_rejects==0 fails, with the evidence, and the verdict is TOO STRICT.
func TestScriptRunFailsOnATooStrictLimiterByItself(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	o.RunID, o.Requests, o.Duration = "", 0, 1500*time.Millisecond
	o.Strategies = []limiter.Strategy{limiter.Custom}
	o.Script, o.ScriptSource = "concurrency_release_leaks.lua", strictScript(t, "concurrency_release_leaks.lua")
	res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wantCheckFailure(t, res, "custom.false_rejects==0 (actual ", "refused ", "were held", "the check every --script run makes")
	st := res.Summary.Strategies[0]
	if v := res.Verdicts[0]; v.Word != verdict.TooStrict {
		t.Errorf("verdict %q (%s), want TOO STRICT", v.Word, v.Text)
	}
	if st.FirstFalseReject == nil || st.FirstFalseReject.Limit != o.Limit || st.FirstFalseReject.HeldOrAdmitted >= o.Limit {
		t.Errorf("first false reject %+v", st.FirstFalseReject)
	}
}

// An --assert on custom.false_rejects replaces the implied check (an approximation's accepted
// bound); the overshoot check stays.
func TestAssertOnFalseRejectsReplacesTheImpliedOne(t *testing.T) {
	o := Options{Strategies: []limiter.Strategy{limiter.Custom}, ScriptSource: "return 1"}
	got := func(o Options) (exprs []string) {
		for _, a := range o.Rules().assertions([]string{"custom"}) {
			exprs = append(exprs, a.Expr)
		}
		return exprs
	}
	if e := strings.Join(got(o), " "); e != "custom.overshoot==0 custom.false_rejects==0 custom.leaks==0" {
		t.Errorf("implied: %s", e)
	}
	o.Assertions = assertions(t, []string{"custom"}, "custom.false_rejects<=100000")
	if e := strings.Join(got(o), " "); e != "custom.false_rejects<=100000 custom.overshoot==0 custom.leaks==0" {
		t.Errorf("with a bound on false rejects: %s", e)
	}
	// With a run id other processes may share the keys: refusals are not judged, so no check
	// can stand on them.
	o.Assertions, o.RunID = nil, "shared"
	if e := strings.Join(got(o), " "); e != "custom.overshoot==0 custom.leaks==0" {
		t.Errorf("with a run id: %s", e)
	}
}

// A run with a run id says its refusals were not judged rather than claim 0; an assertion on
// them has no value and fails, saying why.
func TestRunIDLeavesRefusalsUnjudged(t *testing.T) {
	srv := redistest.Start(t)
	o := baseOptions()
	o.Strategies = []limiter.Strategy{limiter.Lua}
	o.Assertions = assertions(t, []string{"lua"}, "lua.false_rejects==0")
	res, err := Run(context.Background(), o, Deps{Connect: connectTo(t, srv), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Summary.Strategies[0]; st.RefusalsUnjudged == "" || st.FalseRejects != 0 {
		t.Fatalf("refusals judged in a shared run: %+v", st)
	}
	wantCheckFailure(t, res, "lua.false_rejects==0 (actual none; refusals not judged: other processes may share the run's keys")
}

func TestRefusalRulesFollowTheContract(t *testing.T) {
	rules := func(kind limiter.Kind, spec contract.Spec) refusal.Rules {
		t.Helper()
		c, err := contract.Compile(spec, limiter.DefaultContract(kind))
		if err != nil {
			t.Fatal(err)
		}
		return RefusalRules(Options{Limiter: kind, Window: time.Second, Contract: c}, limiter.Custom)
	}
	if r := rules(limiter.TokenBucket, contract.Spec{}); r.RefillStep != 0 {
		t.Error("a bucket given a rate refills continuously")
	}
	if r := rules(limiter.TokenBucket, contract.Spec{Args: "{burst} {limit} {window_s} {cost}"}); r.RefillStep != time.Second {
		t.Error("a bucket given the window may refill per window")
	}
	if r := rules(limiter.TokenBucket, contract.Spec{Args: "{burst} {rate_per_s / 1000} {now_ms + window_ms} {cost}"}); r.RefillStep != time.Second {
		t.Error("a window inside arithmetic is given the window too")
	}
	if r := rules(limiter.Concurrency, contract.Spec{Args: "{member} {limit} {stale_after_s} {now_s}"}); r.StaleUnit != time.Second || r.NoStaleAfter {
		t.Errorf("stale-after in seconds: %+v", r)
	}
	if r := rules(limiter.Concurrency, contract.Spec{Args: "{member} {limit} 30", Release: "none"}); !r.NoStaleAfter || !r.NoRelease {
		t.Errorf("no stale-after, release by expiry: %+v", r)
	}
	// --stale-after given tells the hammer of a stale time fixed in the script's code.
	c, err := contract.Compile(contract.Spec{Args: "{member} {limit} 30"}, limiter.DefaultContract(limiter.Concurrency))
	if err != nil {
		t.Fatal(err)
	}
	if r := RefusalRules(Options{Limiter: limiter.Concurrency, Contract: c, StaleAfterGiven: true}, limiter.Custom); r.NoStaleAfter {
		t.Errorf("no placeholder, --stale-after given: %+v", r)
	}
	// A release script releases, though no release command is given.
	if r := rules(limiter.Concurrency, contract.Spec{Keys: "{key}{slot}", Args: "{member} {stale_after_s}", Allowed: "reply ~= false",
		ReleaseFile: "rel.lua", ReleaseScript: "return 1", ReleaseKeys: "{reply}"}); r.NoRelease {
		t.Errorf("a release script: %+v", r)
	}
	if r := RefusalRules(Options{Limiter: limiter.Concurrency}, limiter.Lua); r != (refusal.Rules{}) {
		t.Errorf("a shipped strategy: %+v", r)
	}
}
