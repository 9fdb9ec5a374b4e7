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
	o := Options{Limiter: limiter.TokenBucket, Limit: 20, Window: time.Second, Profile: bench.ProfileBursty}
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
}
