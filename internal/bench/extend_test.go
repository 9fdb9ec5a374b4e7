package bench_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// thinFor is a rule for loading on that finds the evidence thin for its first probes (n of them),
// and enough after: what a run whose bursts fell badly sees.
func thinFor(n int64) (func(bench.StrategySnapshot) string, *atomic.Int64) {
	var probes atomic.Int64
	return func(bench.StrategySnapshot) string {
		if probes.Add(1) <= n {
			return "thin"
		}
		return ""
	}, &probes
}

func TestARunWhoseEvidenceIsThinAtItsDurationLoadsOnUntilItIsJudged(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	cfg := engineConfig(t, rdb, limiter.FixedWindow, limiter.Lua)
	cfg.Duration, cfg.MaxDuration = time.Second, 10*time.Second
	var probes *atomic.Int64
	cfg.Unjudged, probes = thinFor(1)
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	x := sum.Extended
	if x == nil {
		t.Fatalf("no extension after a thin probe: ran %s", sum.Duration)
	}
	if probes.Load() < 2 || x.Capped || !strings.Contains(x.Why, "lua: thin") || x.To != sum.Duration {
		t.Errorf("extension %+v after %d probes, ran %s; want one step, why naming the strategy", *x, probes.Load(), sum.Duration)
	}
	if sum.Duration < 2*time.Second || sum.Duration >= cfg.MaxDuration {
		t.Errorf("ran %s: want a second past the duration, well short of the cap", sum.Duration)
	}
}

func TestARunWhoseEvidenceSufficesStopsAtItsDuration(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	cfg := engineConfig(t, rdb, limiter.FixedWindow, limiter.Lua)
	cfg.Duration, cfg.MaxDuration = time.Second, 10*time.Second
	var probes *atomic.Int64
	cfg.Unjudged, probes = thinFor(0)
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Extended != nil || probes.Load() != 1 || sum.Duration >= 2*time.Second {
		t.Errorf("extended %+v after %d probes, ran %s; want one probe and a stop at the duration", sum.Extended, probes.Load(), sum.Duration)
	}
}

func TestARunNeverJudgedStopsAtItsCapAndSaysSo(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	cfg := engineConfig(t, rdb, limiter.FixedWindow, limiter.Lua)
	cfg.Duration, cfg.MaxDuration = time.Second, 2500*time.Millisecond
	cfg.Unjudged, _ = thinFor(1 << 30)
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if x := sum.Extended; x == nil || !x.Capped || sum.Duration < cfg.MaxDuration {
		t.Fatalf("extended %+v, ran %s; want loaded on to the cap %s and capped", x, sum.Duration, cfg.MaxDuration)
	}
}

func TestAnInterruptedExtensionStopsAtOnce(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	cfg := engineConfig(t, rdb, limiter.FixedWindow, limiter.Lua)
	cfg.Duration, cfg.MaxDuration = 500*time.Millisecond, time.Minute
	cfg.Unjudged, _ = thinFor(1 << 30)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(1500 * time.Millisecond) // well into the extension
		cancel()
	}()
	sum, err := bench.New(cfg).Run(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Duration > 30*time.Second || sum.Extended == nil {
		t.Errorf("interrupted %v after %s, extended %+v; want an interrupted extension", sum.Interrupted, sum.Duration, sum.Extended)
	}
}

// A run bounded by decisions loads on by half its bound at a time, each strategy apart, and
// stops each exactly at the bound its evidence sufficed at, whether its workers run alone, in
// rounds on shared connections, or on an open loop's schedule.
func TestARunOfRequestsLoadsOnByHalfItsBoundAtATime(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for name, shape := range map[string]func(*bench.Config){
		"workers":   func(*bench.Config) {},
		"rounds":    func(c *bench.Config) { c.Conns = 4 },
		"open loop": func(c *bench.Config) { c.OpenRate = 2000 },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := engineConfig(t, rdb, limiter.FixedWindow, limiter.Lua, limiter.Naive)
			cfg.Duration, cfg.Requests, cfg.MaxRequests = 0, 200, 1000
			shape(&cfg)
			cfg.Unjudged = func(st bench.StrategySnapshot) string {
				if st.Name == "lua" && st.Attempts < 350 {
					return "thin"
				}
				return ""
			}
			sum, err := bench.New(cfg).Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range sum.Strategies {
				want := int64(200)
				if st.Name == "lua" {
					want = 400 // 200, then 300 (thin), then 400: judged
				}
				if st.Attempts != want {
					t.Errorf("%s made %d decisions, want %d", st.Name, st.Attempts, want)
				}
			}
			if x := sum.Extended; x == nil || x.Requests != 400 || x.Capped {
				t.Errorf("extension %+v, want to 400 decisions, not capped", x)
			}
		})
	}
}

// The evidence's power is judged on every admit logged, those still within the lateness horizon
// too: a window of a minute, two seconds into a run, has settled nothing yet, and is not taken
// for a strategy with no evidence (it would load on to its cap for nothing).
func TestThePowerMidRunCountsAdmitsNotYetSettled(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	cfg := engineConfig(t, rdb, limiter.SlidingWindow)
	cfg.Window, cfg.Rate, cfg.Duration, cfg.MaxDuration = time.Minute, 20.0/60, 2*time.Second, 6*time.Second
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Lua, rdb, limiter.Config{Limit: 20, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Strategies = []bench.StrategyRun{{Name: "lua", Limiter: lim}}
	cfg.Unjudged = func(st bench.StrategySnapshot) string { return verdict.LoadOnFor(st, cfg.Limiter, cfg.Limit) }
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if x := sum.Extended; x != nil {
		t.Errorf("loaded on to %s: %s", x.To, x.Why)
	}
	if st := sum.Strategies[0]; st.Overshoot != 0 || st.CaughtFrom == nil || *st.CaughtFrom != 1 {
		t.Errorf("overshoot %d, power %v: want a correct window judged to +1", st.Overshoot, st.CaughtFrom)
	}
}
