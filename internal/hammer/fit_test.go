package hammer

import (
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

func TestUnderAdmittedNoticesAContractThatFitsByAccident(t *testing.T) {
	o := Rules{Limiter: limiter.TokenBucket, Limit: 20, Window: time.Second, Profile: bench.ProfileBursty, Script: true}
	sum := func(admitted int64) bench.Summary {
		return bench.Summary{Duration: 3 * time.Second, Strategies: []bench.StrategySnapshot{
			{Name: "lua", Admitted: 1, Contended: true},
			{Name: "custom", Admitted: admitted, Contended: true},
		}}
	}
	// 2s of load at 20 per second and a burst of 20: about 60. GCRA called with the shipped
	// token-bucket ARGV took its period from now_ms and admitted only its first burst.
	if n := underAdmitted(o, sum(20)); !strings.Contains(n, "custom admitted 20 requests, under half the about 60") {
		t.Errorf("notice %q", n)
	}
	if n := underAdmitted(o, sum(59)); n != "" {
		t.Errorf("a limiter at its limit got a notice: %q", n)
	}
	o.Limiter = limiter.Concurrency // admits depend on the hold time: no estimate
	if n := underAdmitted(o, sum(1)); n != "" {
		t.Errorf("concurrency got a notice: %q", n)
	}
}

func TestDescribeContractSaysWhatIsShipped(t *testing.T) {
	c, err := contract.Compile(contract.Spec{Allowed: "reply[1] > 0", Args: " "}, limiter.DefaultContract(limiter.TokenBucket))
	if err != nil {
		t.Fatal(err)
	}
	got := describeContract(Options{Limiter: limiter.TokenBucket, Contract: c})
	want := "custom: KEYS '{key}' (shipped), ARGV (none), admitted when reply[1] > 0, clock server"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A template given on purpose is the user's, even when it is the shipped one's text; a script
	// that reads TIME runs on the virtual clock, and the line says who answers its TIME.
	c, err = contract.Compile(contract.Spec{Keys: "{key}", Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0", ReadsTime: true}, limiter.DefaultContract(limiter.TokenBucket))
	if err != nil {
		t.Fatal(err)
	}
	got = describeContract(Options{Limiter: limiter.TokenBucket, Contract: c})
	want = "custom: KEYS '{key}', ARGV '{burst} {limit} {window_s} {cost}', admitted when reply[1] > 0, clock virtual (the hammer answers the script's TIME with each call's own time)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A release script is named with its templates.
	c, err = contract.Compile(contract.Spec{Keys: "{key}{slot}", Args: "{member}", Allowed: "reply ~= false", ReleaseFile: "rel.lua", ReleaseScript: "return 1", ReleaseKeys: "{reply}"},
		limiter.DefaultContract(limiter.Concurrency))
	if err != nil {
		t.Fatal(err)
	}
	got = describeContract(Options{Limiter: limiter.Concurrency, Contract: c})
	if !strings.Contains(got, "release script rel.lua with KEYS '{reply}', ARGV '{member}'") {
		t.Errorf("release script: %s", got)
	}
}

// A user who forgets the contract flags runs the script under the shipped contract. When it
// then admits under half what its limit allows (go-redis/redis_rate's GCRA reads now_ms as its
// period; express rate-limit-redis reads the limit as its reset flag), or when its calls fail,
// the run fails and says to describe the script's own contract, not to run through errors.
func TestShippedContractThatDoesNotFitFailsWithAHint(t *testing.T) {
	shipped, err := contract.Compile(contract.Spec{}, limiter.DefaultContract(limiter.TokenBucket))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Limiter: limiter.TokenBucket, Limit: 20, Window: time.Second, Profile: bench.ProfileBursty,
		Strategies: []limiter.Strategy{limiter.Custom}, ScriptSource: "return 1", Contract: shipped}
	sum := func(st bench.StrategySnapshot) bench.Summary {
		st.Name = "custom"
		return bench.Summary{Duration: 3 * time.Second, Strategies: []bench.StrategySnapshot{st}}
	}
	hint := "describe them with --script-keys, --script-args and --script-allowed"
	// No assertion: the implied overshoot check passes on these numbers, so only the misfit fails.
	failures := Judge(o.Rules(), sum(bench.StrategySnapshot{Admitted: 20, Attempts: 5000, Contended: true})).Failures
	if len(failures) != 1 || !strings.Contains(failures[0], "custom admitted 20 requests, under half") || !strings.Contains(failures[0], hint) {
		t.Errorf("under-admitted with the shipped contract: %q", failures)
	}
	failures = Judge(o.Rules(), sum(bench.StrategySnapshot{Attempts: 100, Errors: 100})).Failures
	if len(failures) != 1 || !strings.Contains(failures[0], hint) || strings.Contains(failures[0], "--on-error open") {
		t.Errorf("errors with the shipped contract: %q", failures)
	}

	own, err := contract.Compile(contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0"}, limiter.DefaultContract(limiter.TokenBucket))
	if err != nil {
		t.Fatal(err)
	}
	o.Contract = own
	j := Judge(o.Rules(), sum(bench.StrategySnapshot{Admitted: 20, Attempts: 5000, Contended: true}))
	if len(j.Failures) != 0 || len(j.Notices) != 1 || !strings.Contains(j.Notices[0], "custom admitted 20 requests, under half") {
		t.Errorf("a contract of the user's own that admits little is a notice, not a failure: failures %q notices %q", j.Failures, j.Notices)
	}
}
