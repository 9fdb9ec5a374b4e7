package hammer

import (
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

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
	want = "custom: KEYS '{key}', ARGV '{burst} {limit} {window_s} {cost}', admitted when reply[1] > 0, clock virtual (the hammer answers the script's TIME with each call's own time, never going back per key)"
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

// A user who forgets the contract flags runs the script under the shipped contract. When its
// calls then fail, the run fails and says to describe the script's own contract, not to run
// through errors. A script that only admits little under it (go-redis/redis_rate's GCRA reads
// now_ms as its period) is not called a misfit: its refusals are judged, and where it refused
// with room the verdict is TOO STRICT, on evidence (the implied custom.false_rejects==0).
func TestShippedContractThatDoesNotFitFailsWithAHint(t *testing.T) {
	shipped, err := contract.Compile(contract.Spec{}, limiter.DefaultContract(limiter.TokenBucket))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Limiter: limiter.TokenBucket, Limit: 20, Window: time.Second, Profile: limiter.ProfileBursty,
		Strategies: []limiter.Strategy{limiter.Custom}, ScriptSource: "return 1", Contract: shipped}
	sum := func(st bench.StrategySnapshot) bench.Summary {
		st.Name = "custom"
		return bench.Summary{Duration: 3 * time.Second, Strategies: []bench.StrategySnapshot{st}}
	}
	hint := "describe them with --script-keys, --script-args and --script-allowed"
	if failures := Judge(o.Rules(), sum(bench.StrategySnapshot{Admitted: 20, Attempts: 5000, Contended: true, Leaks: &bench.Leaks{}})).Failures; len(failures) != 0 {
		t.Errorf("a low admit count alone named a misfit: %q", failures)
	}
	failures := Judge(o.Rules(), sum(bench.StrategySnapshot{Attempts: 100, Errors: 100})).Failures
	if len(failures) != 1 || !strings.Contains(failures[0], hint) || strings.Contains(failures[0], "--on-error open") {
		t.Errorf("errors with the shipped contract: %q", failures)
	}
}
