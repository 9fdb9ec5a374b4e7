package bench_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// Abandoned requests (Config.Abandon) on a real redis-server: a correct limiter reclaims them
// after stale-after and is blamed for nothing; one that never does is caught refusing with room.

// The shipped scripts reclaim what a tenth of their admits abandon, a stale-after (300ms) later,
// on every path a decision takes: a goroutine per worker through go-redis (decide), and the
// rounds of direct connections and of --conns 4. Each worker abandons its share exactly, so the
// run's abandoned requests are the share of its admits to within a request per worker; more than
// the limit of them were admitted, so slots were reclaimed.
func TestShippedScriptsReclaimAbandonedRequestsUnblamed(t *testing.T) {
	skipShort(t)
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 100})
	defer rdb.Close()
	const share, stale = 0.1, 300 * time.Millisecond
	for _, mode := range []struct {
		name   string
		direct *redis.Options
		conns  int
	}{{"goroutines", nil, 0}, {"direct rounds", directOf(srv), 0}, {"direct conns 4", directOf(srv), 4}} {
		t.Run(mode.name, func(t *testing.T) {
			// Run until every strategy was contended and abandoned more than the limit (the
			// proof that slots were reclaimed), longer each time on a slow machine.
			for d, attempt := 1500*time.Millisecond, 0; ; d, attempt = 2*d, attempt+1 {
				sum, cfg := reclaimRun(t, rdb, mode.direct, mode.conns, share, stale, d, attempt)
				if !reclaimedEnough(sum, cfg) && d < 20*time.Second {
					t.Logf("after %s: not every strategy contended and abandoned more than %d; again, longer", d, cfg.Limit)
					continue
				}
				for _, st := range sum.Strategies {
					checkNotBlamed(t, st)
					want := share * float64(st.Admitted)
					t.Logf("%s: %d abandoned of %d admitted, peak %d", st.Name, st.Abandoned, st.Admitted, st.Peak)
					if math.Abs(float64(st.Abandoned)-want) > float64(cfg.Workers) {
						t.Errorf("%s: %d abandoned of %d admitted, want %.0f within %d", st.Name, st.Abandoned, st.Admitted, want, cfg.Workers)
					}
					// An abandoned request keeps its slot until it is reclaimed: without reclaiming,
					// the limit's worth would have been the last admitted.
					if st.Abandoned <= cfg.Limit || st.Overshoot != 0 {
						t.Errorf("%s: %d abandoned, overshoot %d: abandoned slots not reclaimed, or over the limit", st.Name, st.Abandoned, st.Overshoot)
					}
				}
				return
			}
		})
	}
}

// reclaimRun is one run of the shipped scripts for d with share of admits abandoned.
func reclaimRun(t *testing.T, rdb redis.UniversalClient, direct *redis.Options, conns int, share float64, stale, d time.Duration, attempt int) (bench.Summary, bench.Config) {
	t.Helper()
	cfg := bench.Config{
		RunID: "test", Limiter: limiter.Concurrency, Limit: 20, Workers: 32, Conns: conns, Duration: d,
		Hold: 2 * time.Millisecond, StaleAfter: stale, Abandon: share, KeyCount: 1, Horizon: 5 * time.Second,
		Skew:   limiter.DefaultSkew(limiter.Concurrency, 20, time.Second),
		KeyFor: func(s string, i int) string { return fmt.Sprintf("t:{%s.%d}:%s:%d", t.Name(), attempt, s, i) },
	}
	for _, s := range []limiter.Strategy{limiter.Lua, limiter.Eval, limiter.Function} {
		lim, err := limiter.New(limiter.Concurrency, s, rdb, limiter.Config{Limit: 20, StaleAfter: stale, Direct: direct})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Strategies = append(cfg.Strategies, bench.StrategyRun{Name: string(s), Limiter: lim})
	}
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum, cfg
}

func reclaimedEnough(sum bench.Summary, cfg bench.Config) bool {
	for _, st := range sum.Strategies {
		if st.Rejected == 0 || st.Abandoned <= cfg.Limit {
			return false
		}
	}
	return true
}

// neverReclaims are concurrency limiters that keep an abandoned member until their whole set
// expires: sidekiq-throttled's deadlines never dropped, and APISIX's limit-conn on whole seconds.
var neverReclaims = strictNamed("strict/concurrency_deadlines_never_dropped.lua", "strict/concurrency_deadlines_whole_seconds_never_dropped.lua")

// strictNamed are the strictScripts of these files, in their order.
func strictNamed(files ...string) []powerCase {
	var out []powerCase
	for _, f := range files {
		for _, c := range strictScripts {
			if c.file == f {
				out = append(out, c)
			}
		}
	}
	return out
}

// Each of them is caught within the default load (default stale-after and share of abandoned
// requests): TOO STRICT, with evidence naming abandoned requests a correct limiter had
// reclaimed. Without abandoned requests the same script is blamed for nothing: the refusals
// come from the slots crashed clients left.
func TestLimitersThatNeverReclaimAbandonedRequestsAreTooStrict(t *testing.T) {
	skipShort(t)
	srv := redistest.Start(t)
	for _, c := range neverReclaims {
		t.Run(c.file, func(t *testing.T) {
			st, at := powerRunUntil(t, singleNode(t, srv), c, 20*time.Second, true, func(s bench.StrategySnapshot) bool { return s.FalseRejects > 0 })
			v := verdict.Judge(st, c.kind, 20, at)
			t.Logf("caught at %s: %s: %s; first %+v", at.Round(10*time.Millisecond), v.Word, v.Text, st.FirstFalseReject)
			if at == 0 || v.Word != verdict.TooStrict || st.Abandoned == 0 {
				t.Fatalf("not caught: %s (%s), %d abandoned", v.Word, v.Text, st.Abandoned)
			}
			if m := st.Tightest.AbandonedReclaimable; m == nil || *m < 1 || *m > st.Tightest.Limit-st.Tightest.HeldOrAdmitted {
				t.Errorf("evidence %+v: want 1 to limit-held abandoned requests reclaimable", st.Tightest)
			}
			cfg := defaultLoad(t, c.kind, customStrategyOn(t, srv, c.file, c.kind, c.spec, directOf(srv)), soundnessDuration())
			cfg.Abandon = 0
			sum, err := bench.New(cfg).Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkNotBlamed(t, sum.Strategies[0])
		})
	}
}

// A script whose contract carries no stale time is a plain semaphore as far as the hammer can
// know: it never has to reclaim, and its abandoned requests count as held for ever. Told the
// stale time fixed in its code (--stale-after), the same script is held to it.
func TestAPlainSemaphoreIsNotBlamedForKeepingAbandonedRequests(t *testing.T) {
	skipShort(t)
	srv := redistest.Start(t)
	fixed := powerCase{"strict/concurrency_deadlines_never_dropped.lua", limiter.Concurrency, contract.Spec{
		Keys: "{key}:in_progress {key}:backlog", Args: "{member} {limit} 1 {now_s}", Allowed: "reply == 0", Release: "ZREM {key}:in_progress {member}"}}
	run := customStrategyOn(t, srv, fixed.file, fixed.kind, fixed.spec, directOf(srv))
	if !run.Refusals.NoStaleAfter {
		t.Fatalf("a contract without a stale time: rules %+v", run.Refusals)
	}
	sum, err := bench.New(defaultLoad(t, fixed.kind, run, 3*time.Second)).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := sum.Strategies[0]; st.Abandoned == 0 {
		t.Fatalf("nothing abandoned: %+v", st)
	} else {
		checkNotBlamed(t, st)
	}
	// --stale-after 1s: the threshold of 1 it passes is that time.
	c, err := contract.Compile(fixed.spec, limiter.DefaultContract(fixed.kind))
	if err != nil {
		t.Fatal(err)
	}
	run.Refusals = hammer.RefusalRules(hammer.Options{Limiter: fixed.kind, Contract: c, StaleAfterGiven: true}, limiter.Custom)
	cfg := defaultLoad(t, fixed.kind, run, 20*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps := make(chan bench.Snapshot, 4)
	go func() {
		for s := range snaps {
			if s.Strategies[0].FalseRejects > 0 {
				cancel()
			}
		}
	}()
	if sum, err = bench.New(cfg).Run(ctx, snaps); err != nil {
		t.Fatal(err)
	}
	if st := sum.Strategies[0]; st.FalseRejects == 0 {
		t.Errorf("told its stale time, the script was not caught keeping abandoned requests: %+v", st)
	}
}

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) skips it")
	}
}
