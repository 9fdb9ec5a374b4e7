package bench_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// serverClockRun hammers a GCRA script that reads TIME (redis_rate's calling style) through
// the engine with server-clock evidence for d, on keys of the test's own named by attempt.
func serverClockRun(t *testing.T, srv *redistest.Server, file string, d time.Duration, attempt int) bench.StrategySnapshot {
	t.Helper()
	src, err := os.ReadFile("../../testdata/limiters/" + file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Compile(contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0", Clock: "server"}, limiter.DefaultContract(limiter.TokenBucket))
	if err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	lim, err := limiter.New(limiter.TokenBucket, limiter.Custom, rdb, limiter.Config{
		Rate: 20, Burst: 20, Limit: 20, Window: time.Second, CustomSource: string(src), Contract: c})
	if err != nil {
		t.Fatal(err)
	}
	cfg := bench.Config{
		RunID: "test", Limiter: limiter.TokenBucket, Limit: 20, Window: time.Second, Rate: 20, Workers: 64,
		Duration: d, Hold: 2 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
		KeyFor:     func(s string, i int) string { return fmt.Sprintf("t:{%s}:%d:%s:%d", t.Name(), attempt, s, i) },
		Strategies: []bench.StrategyRun{{Name: "custom", Limiter: lim, ServerClock: true}},
	}
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Strategies[0]
}

func TestServerClockEvidenceIsSoundAndSharp(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) skips it")
	}
	srv := redistest.Start(t)
	for run := 1; run <= 3; run++ {
		got := serverClockRun(t, srv, "gcra_server_time.lua", 2*time.Second, run)
		if got.Errors != 0 || got.Rejected == 0 || got.Admitted < 20 {
			t.Fatalf("run %d: the correct GCRA was not contended cleanly: %+v", run, got)
		}
		if got.Overshoot != 0 {
			t.Fatalf("run %d: a correct GCRA reading TIME was blamed: overshoot %d (peak %d)", run, got.Overshoot, got.Peak)
		}
	}
	// Caught within 5s on a quiet machine. Beside another load each call takes longer, so its
	// [sent, replied] interval is wider and fewer admits fall certainly inside one window: run
	// 5s at a time until it is caught, at most 30s, rather than assume a quiet machine's rate.
	var got bench.StrategySnapshot
	for attempt := 1; attempt <= 6; attempt++ {
		got = serverClockRun(t, srv, "buggy/gcra_double_rate.lua", 5*time.Second, 10+attempt)
		if got.Errors != 0 || got.Overshoot > 0 {
			break
		}
		t.Logf("5s run %d: not caught yet (peak %d, %d admitted)", attempt, got.Peak, got.Admitted)
	}
	if got.Errors != 0 || got.Overshoot == 0 {
		t.Fatalf("a GCRA admitting twice its rate was not caught in 30s: overshoot %d, peak %d, %d admitted, %d errors",
			got.Overshoot, got.Peak, got.Admitted, got.Errors)
	}
}
