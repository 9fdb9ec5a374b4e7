package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// Clocks far apart (--skew 600ms: the workers disagree by up to 1.2s) make a bucket decide late
// calls by a clock well ahead of theirs, or find its key expired by a clock ahead (the shipped
// script's TTL leaves a second of margin; a TTL of exactly the time to refill, as redis_rate's
// EX ceil(reset_after), leaves none): the evidence forgives the refill of the lateness it judges,
// so no correct bucket is blamed, whichever clock it runs on.
func TestBucketEvidenceIsSoundUnderLargeSkew(t *testing.T) {
	srv := redistest.Start(t)
	ship, err := limiter.New(limiter.TokenBucket, limiter.Lua, srv.Client(t), limiter.Config{Limit: 20, Burst: 20, Rate: 20, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name string
		run  bench.StrategyRun
	}{
		{"lua", bench.StrategyRun{Name: "lua", Limiter: ship, EpochAligned: true}},
		{"redis_rate style on the virtual clock", customStrategy(t, srv, "gcra_server_time.lua", limiter.TokenBucket, contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0"})},
		{"Spring style on the virtual clock", customStrategy(t, srv, "token_bucket_two_keys.lua", limiter.TokenBucket, contract.Spec{Keys: "{key}.tokens {key}.timestamp", Args: `{rate_per_s} {burst} "" {cost}`})},
		{"tokens and time of refill", customStrategy(t, srv, "token_bucket_tokens.lua", limiter.TokenBucket, contract.Spec{})},
	}
	for _, r := range runs {
		run, name := r.run, r.name
		t.Run(name, func(t *testing.T) {
			cfg := defaultLoad(t, limiter.TokenBucket, run, 3500*time.Millisecond)
			cfg.Skew = 600 * time.Millisecond
			sum, err := bench.New(cfg).Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			s := sum.Strategies[0]
			t.Logf("admitted %d rejected %d unjudged %d peak %d", s.Admitted, s.Rejected, s.Unjudged, s.Peak)
			if s.Errors != 0 || s.Rejected == 0 {
				t.Fatalf("not a clean contended run: %d errors, %d rejected", s.Errors, s.Rejected)
			}
			if s.Overshoot != 0 {
				t.Errorf("a correct bucket under a 600ms skew: overshoot %d (peak %d, %d events)", s.Overshoot, s.Peak, s.OvershootEvent)
			}
		})
	}
}
