package bench_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/redistest"
)

// libraryFixtures are the scripts in testdata/limiters, written in the calling style of
// well-known libraries, with the contract flags the README gives for each.
var libraryFixtures = []struct {
	file string
	kind limiter.Kind
	spec contract.Spec
}{
	{"gcra_server_time.lua", limiter.TokenBucket, contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0"}},
	{"sliding_two_counters.lua", limiter.SlidingWindowCounter, twoCounters},
	{"fixed_window_counter.lua", limiter.FixedWindow, contract.Spec{Keys: "{key}:{window_index}", Args: "{limit} {window_ms} {cost}", Allowed: "reply[1] <= reply[2]"}},
	{"concurrency_deadlines.lua", limiter.Concurrency, contract.Spec{Keys: "{key}:in_progress {key}:backlog", Args: "{member} {limit} {stale_after_s} {now_s}", Allowed: "reply == 0", Release: "ZREM {key}:in_progress {member}"}},
	// APISIX's limit-conn: deadlines on a clock of whole seconds (ngx.time()), given as the window's index.
	{"concurrency_deadlines_whole_seconds.lua", limiter.Concurrency, contract.Spec{Keys: "{key}", Args: "{limit} {stale_after_s} {window_index} {member}", Allowed: "reply[1] == 1", Release: "ZREM {key} {member}"}},
	{"moving_window_list.lua", limiter.SlidingWindow, contract.Spec{Args: "{now_s} {limit} {window_s} {cost}", Allowed: "reply ~= false"}},
	{"fixed_window_first_hit.lua", limiter.FixedWindow, contract.Spec{Keys: "{key}", Args: "{cost} {window_s}", Allowed: "reply[1] <= {limit}"}},
	{"token_bucket_two_keys.lua", limiter.TokenBucket, contract.Spec{Keys: "{key}.tokens {key}.timestamp", Args: `{rate_per_s} {burst} "" {cost}`}},
	{"concurrency_slots.lua", limiter.Concurrency, contract.Spec{Keys: "{key}{slot}", Args: "{key} {stale_after_s} {member}", Allowed: "reply ~= false",
		Release: `EVAL "if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) end return 0" 1 {reply} {member}`}},
	// The third release's contracts: whole seconds (go-zero), nanoseconds and a window opened by
	// the first call (sethvargo/go-redisstore), microseconds with a rate per microsecond (Traefik),
	// a release that is a script of its own (Laravel).
	{"token_bucket_unix_seconds.lua", limiter.TokenBucket, contract.Spec{Keys: "{key}.tokens {key}.ts", Args: "{rate_per_s} {burst} {now_s_int} {cost}", Allowed: "reply == 1"}},
	{"fixed_window_first_hit_ns.lua", limiter.FixedWindow, contract.Spec{Keys: "{key}", Args: "{now_ns} {limit} {window_ns}", Allowed: "reply[4] == 1"}},
	{"token_bucket_microseconds.lua", limiter.TokenBucket, contract.Spec{Args: "{rate_per_s / 1000000} {burst} {now_us} {window_s * 2} {cost}"}},
	{"concurrency_slots.lua", limiter.Concurrency, contract.Spec{Keys: "{key}{slot}", Args: "{key} {stale_after_s} {member}", Allowed: "reply ~= false",
		ReleaseFile: "concurrency_slot_release.lua", ReleaseKeys: "{reply}", ReleaseArgs: "{member}"}},
	// The sixth release: fixed windows that begin before the call that opened them for the key,
	// correct under the model of unknown alignment, blamed by windows anchored at their openers:
	// a grid phased by its first hit (go-redisstore's ticks counted from a stored start, the time
	// in ns built from {now_us}); and a window opened by the first call after the last closed, on
	// whole seconds (RedisRateLimiting), as its library documents it (--window-start first-hit):
	// told whole seconds, its windows are pinned down only by anchors, and at any start a default
	// run's power is often no better than the limit (not judged).
	{"fixed_window_grid_ns.lua", limiter.FixedWindow, contract.Spec{Keys: "{key}", Args: "{now_us}000 {limit} {window_ms}000000", Allowed: "reply[4] == 1"}},
	{"fixed_window_expires_at.lua", limiter.FixedWindow, contract.Spec{Keys: "{key} {key}:exp", Args: "{now_s_int + window_s} {now_s_int} {limit} {cost}", Allowed: "reply[3] == 1",
		WindowStart: contract.FirstHitStart}},
}

// twoCounters is upstash/ratelimit's slidingWindow contract: the window's counter and the one
// before named by their index, an optional dynamic-limit key left empty, the increment.
var twoCounters = contract.Spec{Keys: `{key}:{window_index} {key}:{prev_window_index} ""`, Args: "{limit} {now_ms} {window_ms} {cost}", Allowed: "reply[1] >= 0"}

// customStrategy builds the custom strategy as the hammer does for a script in testdata/limiters:
// its contract (a script that reads TIME and is given no time runs on the virtual clock), its
// limiter, and the evidence the contract implies (the server clock's intervals, a fixed window's
// alignment, the time quantum, a virtual clock's monotone TIME).
func customStrategy(t *testing.T, srv *redistest.Server, file string, kind limiter.Kind, spec contract.Spec) bench.StrategyRun {
	t.Helper()
	return customStrategyOn(t, srv, file, kind, spec, nil)
}

// customStrategyOn is customStrategy whose calls go out on connections of their own dialled
// with direct (limiter.Config.Direct), as the hammer's on a single node; nil: through go-redis.
func customStrategyOn(t *testing.T, srv *redistest.Server, file string, kind limiter.Kind, spec contract.Spec, direct *redis.Options) bench.StrategyRun {
	t.Helper()
	return customStrategyVia(t, srv.Client(t), file, kind, spec, limiter.Config{Direct: direct})
}

// customStrategyVia is customStrategy on rdb, its calls going out as transport's Direct, or
// Shared and SharedTimeout, say (as the hammer's on a single node, or on a cluster).
func customStrategyVia(t *testing.T, rdb redis.UniversalClient, file string, kind limiter.Kind, spec contract.Spec, transport limiter.Config) bench.StrategyRun {
	t.Helper()
	src, err := os.ReadFile("../../testdata/limiters/" + file)
	if err != nil {
		t.Fatal(err)
	}
	spec.ReadsTime = lint.ReadsTime(src)
	if spec.ReleaseFile != "" {
		rel, err := os.ReadFile("../../testdata/limiters/" + spec.ReleaseFile)
		if err != nil {
			t.Fatal(err)
		}
		spec.ReleaseScript = string(rel)
	}
	c, err := contract.Compile(spec, limiter.DefaultContract(kind))
	if err != nil {
		t.Fatal(err)
	}
	stale, quantum := defaultStaleAfter, c.TimeQuantum()
	if kind.Describe().Releases {
		// As the hammer picks them: two units of a whole-second clock, a window's index a clock.
		stale, quantum = hammer.DefaultStaleAfterFor(2*time.Millisecond, c.ClockUnit(time.Second)), c.NowQuantum(time.Second)
	}
	lim, err := limiter.New(kind, limiter.Custom, rdb, limiter.Config{
		Rate: 20, Burst: 20, Limit: 20, Window: time.Second, StaleAfter: stale, CustomSource: string(src), Contract: c,
		Direct: transport.Direct, Shared: transport.Shared, SharedTimeout: transport.SharedTimeout, Nodes: transport.Nodes})
	if err != nil {
		t.Fatal(err)
	}
	fixtureStale.Store(lim, stale)
	return bench.StrategyRun{Name: "custom", Limiter: lim, ServerClock: c.Clock == contract.ServerClock,
		MonotoneTime: c.Clock == contract.VirtualClock, EpochAligned: c.EpochAligned(), FirstHitWindows: c.FirstHitWindows(), TimeQuantum: quantum,
		Refusals: hammer.RefusalRules(hammer.Options{Limiter: kind, Window: time.Second, Contract: c}, limiter.Custom)}
}

// fixtureStale holds the stale-after each custom limiter was built with (limiter.Limiter ->
// time.Duration), so the load that runs it judges by the same one.
var fixtureStale sync.Map

// defaultStaleAfter is the hammer's stale-after for its default hold of 2ms.
var defaultStaleAfter = hammer.DefaultStaleAfter(2 * time.Millisecond)

// defaultLoad is the hammer's default load for one strategy (64 workers, limit 20, window 1s,
// the default stale-after and share of abandoned requests, the limiter's default profile and
// skew) for d, with a think time of 2ms after each admit.
func defaultLoad(t *testing.T, kind limiter.Kind, run bench.StrategyRun, d time.Duration) bench.Config {
	id := fmt.Sprintf("%d", time.Now().UnixNano())
	stale := defaultStaleAfter
	if s, ok := fixtureStale.Load(run.Limiter); ok {
		stale = s.(time.Duration)
	}
	burst := 0.0
	if kind == limiter.FixedWindow && !run.EpochAligned && !run.FirstHitWindows && !run.ServerClock && !run.AdmitAt {
		burst = bench.UnalignedBurstWindows // as the hammer's (hammer.burstWindows)
	}
	return bench.Config{
		Profile: limiter.DefaultProfile(kind), Skew: limiter.DefaultSkew(kind, 20, time.Second), BurstWindows: burst,
		RunID: id, Limiter: kind, Limit: 20, Window: time.Second, Rate: 20, Workers: 64, StaleAfter: stale,
		Crashes: hammer.DefaultCrashes(20, stale), Duration: d, Hold: 2 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
		KeyFor:     func(s string, i int) string { return fmt.Sprintf("t:{%s.%s}:%s:%d", t.Name(), id, s, i) },
		Strategies: []bench.StrategyRun{run},
	}
}

// fixtureName names a fixture's test: its file, and its release script's when it has one.
func fixtureName(file string, spec contract.Spec) string {
	if spec.ReleaseFile != "" {
		return file + " released by " + spec.ReleaseFile
	}
	return file
}

// fixtureRun hammers one fixture at the hammer's default load for d.
func fixtureRun(t *testing.T, srv *redistest.Server, file string, kind limiter.Kind, spec contract.Spec, d time.Duration) bench.StrategySnapshot {
	t.Helper()
	sum, err := bench.New(defaultLoad(t, kind, customStrategy(t, srv, file, kind, spec), d)).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Strategies[0]
}

func TestLibraryStyleFixturesRunUnderTheirContracts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) skips it")
	}
	srv := redistest.Start(t)
	for _, f := range libraryFixtures {
		t.Run(fixtureName(f.file, f.spec), func(t *testing.T) {
			got := fixtureRun(t, srv, f.file, f.kind, f.spec, 2500*time.Millisecond)
			t.Logf("%s: admitted %d rejected %d errors %v peak %d overshoot %d", f.file, got.Admitted, got.Rejected, got.ErrorsByKind, got.Peak, got.Overshoot)
			if got.Errors != 0 || got.Admitted == 0 || got.Rejected == 0 {
				t.Fatalf("not a clean contended run: admitted %d rejected %d errors %v", got.Admitted, got.Rejected, got.ErrorsByKind)
			}
			if got.Overshoot != 0 {
				t.Errorf("overshoot %d (peak %d)", got.Overshoot, got.Peak)
			}
		})
	}
}
