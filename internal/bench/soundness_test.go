package bench_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/redistest"
)

// At the smallest window the hammer accepts (1ms), requests on a loaded machine often reach
// Redis more than a window after the now they carry; the shipped scripts are exact only for
// requests that arrive within one window of their now, so those are left unjudged. What is
// judged must show a correct atomic script at 0.
func TestAtomicWindowScriptsShowNoOvershootAtTheSmallestWindow(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 300})
	defer rdb.Close()
	const window = time.Millisecond
	for _, k := range []limiter.Kind{limiter.SlidingWindow, limiter.FixedWindow} {
		t.Run(string(k), func(t *testing.T) {
			cfg := bench.Config{
				RunID: "test", Limiter: k, Limit: 5, Window: window, Workers: 64,
				Duration: 1500 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
				KeyFor: func(s string, i int) string { return fmt.Sprintf("t:{%s}:%s:%d", t.Name(), s, i) },
			}
			for _, s := range []limiter.Strategy{limiter.Lua, limiter.Eval, limiter.Function} {
				lim, err := limiter.New(k, s, rdb, limiter.Config{Limit: 5, Window: window, StaleAfter: 10 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				cfg.Strategies = append(cfg.Strategies, bench.StrategyRun{Name: string(s), Limiter: lim, EpochAligned: true})
			}
			sum, err := bench.New(cfg).Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sum.Strategies {
				t.Logf("%s: admitted %d rejected %d errors %d unjudged %d peak %d", s.Name, s.Admitted, s.Rejected, s.Errors, s.Unjudged, s.Peak)
				if s.Errors != 0 || s.Admitted == 0 {
					t.Fatalf("%s: %d errors, %d admitted: the run proves nothing", s.Name, s.Errors, s.Admitted)
				}
				if s.Overshoot != 0 {
					t.Errorf("%s at a %s window: overshoot %d (peak %d, %d events), want 0", s.Name, window, s.Overshoot, s.Peak, s.OvershootEvent)
				}
			}
		})
	}
}

// At the shortest --stale-after the hammer accepts beside the default hold (just longer than
// it), a loaded machine often holds a request past stale-after after its decision: the limiter
// may then forget it (reclaimed, or its set expired without a write), so the witness must stop
// counting it. A correct atomic script shows 0 with either witness.
func TestAtomicConcurrencyScriptsShowNoOvershootAtAShortStaleAfter(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 300})
	defer rdb.Close()
	const stale, hold = 3 * time.Millisecond, 2 * time.Millisecond
	for _, witness := range []string{"local", "redis"} {
		t.Run(witness, func(t *testing.T) {
			cfg := bench.Config{
				RunID: "test", Limiter: limiter.Concurrency, Limit: 20, Workers: 64, Hold: hold, StaleAfter: stale,
				Duration: 1500 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
				KeyFor: func(s string, i int) string { return fmt.Sprintf("t:{%s}:%s:%d", t.Name(), s, i) },
			}
			for _, s := range []limiter.Strategy{limiter.Lua, limiter.Eval, limiter.Function} {
				lim, err := limiter.New(limiter.Concurrency, s, rdb, limiter.Config{Limit: 20, StaleAfter: stale})
				if err != nil {
					t.Fatal(err)
				}
				run := bench.StrategyRun{Name: string(s), Limiter: lim}
				if witness == "redis" {
					run.Witness = func(key string) *overshoot.RedisWitness {
						return overshoot.NewRedisWitness(rdb, key+":witness", 20, stale, 5*time.Second)
					}
				}
				cfg.Strategies = append(cfg.Strategies, run)
			}
			sum, err := bench.New(cfg).Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sum.Strategies {
				t.Logf("%s: admitted %d rejected %d errors %d peak %d", s.Name, s.Admitted, s.Rejected, s.Errors, s.Peak)
				if s.Errors != 0 || s.Admitted == 0 {
					t.Fatalf("%s: %d errors, %d admitted: the run proves nothing", s.Name, s.Errors, s.Admitted)
				}
				if s.Overshoot != 0 {
					t.Errorf("%s with stale-after %s, hold %s: overshoot %d (peak %d, %d events), want 0", s.Name, stale, hold, s.Overshoot, s.Peak, s.OvershootEvent)
				}
			}
		})
	}
}

// INFO commandstats that does not answer never delays the snapshots or the end of the run.
func TestSlowServerStatsDelayNeitherSnapshotsNorTheStop(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr})
	defer rdb.Close()
	cfg := engineConfig(t, rdb, limiter.Concurrency, limiter.Lua)
	cfg.Workers, cfg.Tick = 4, 100*time.Millisecond
	var calls atomic.Int32
	cfg.ServerStats = func(ctx context.Context) (map[string]redisconn.CmdStat, error) {
		if calls.Add(1) == 1 {
			return map[string]redisconn.CmdStat{}, nil // the baseline answers
		}
		<-ctx.Done() // then the server is too busy to answer INFO
		return nil, ctx.Err()
	}
	snapshots := make(chan bench.Snapshot, 100)
	var gaps []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := time.Now()
		for range snapshots {
			gaps = append(gaps, time.Since(last))
			last = time.Now()
		}
	}()
	started := time.Now()
	if _, err := bench.New(cfg).Run(context.Background(), snapshots); err != nil {
		t.Fatal(err)
	}
	took := time.Since(started)
	<-done
	// Generous for a loaded machine: a 1s run with 100ms ticks; a blocking INFO held each for 2s.
	if calls.Load() < 2 {
		t.Fatalf("INFO read %d times: the background reads never ran", calls.Load())
	}
	if took > 2500*time.Millisecond {
		t.Errorf("a 1s run took %s with INFO not answering", took)
	}
	for i, g := range gaps {
		if g > 900*time.Millisecond {
			t.Errorf("snapshot %d came %s after the previous one", i, g)
		}
	}
}

// memoryConcurrency is the shipped concurrency script run in process: it reclaims members
// scored at or below now - stale-after, then admits below the limit, scored by the caller's now.
type memoryConcurrency struct {
	mu      sync.Mutex
	limit   int
	stale   int64
	members map[string]int64
	next    int
}

func (l *memoryConcurrency) Acquire(_ context.Context, _ string, now time.Time) (limiter.Decision, error) {
	time.Sleep(roundTrip)
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := now.UnixMilli()
	for m, score := range l.members {
		if score <= ms-l.stale {
			delete(l.members, m)
		}
	}
	if len(l.members) >= l.limit {
		return limiter.Decision{}, nil
	}
	l.next++
	member := strconv.Itoa(l.next)
	l.members[member] = ms
	return limiter.Decision{Allowed: true, Member: member}, nil
}

func (l *memoryConcurrency) Release(_ context.Context, _ string, d limiter.Decision) error {
	l.mu.Lock()
	delete(l.members, d.Member)
	l.mu.Unlock()
	return nil
}

// With --skew a worker whose clock runs ahead has the limiter reclaim, rightly by its clock, a
// request that another worker, whose clock runs behind, still holds: the witness must judge
// what the limiter had to remember by the most advanced clock, not by the recording worker's.
func TestSkewedClocksReclaimingAHeldRequestShowNoOvershoot(t *testing.T) {
	lim := &memoryConcurrency{limit: 1, stale: 20, members: map[string]int64{}}
	cfg := bench.Config{
		RunID: "skew", Limiter: limiter.Concurrency, Limit: 1, Workers: 2, Skew: 8 * time.Millisecond,
		Hold: 15 * time.Millisecond, StaleAfter: 20 * time.Millisecond, Duration: 500 * time.Millisecond,
		KeyCount: 1, Horizon: time.Second, KeyFor: func(s string, i int) string { return "skew:" + s },
		Strategies: []bench.StrategyRun{{Name: "memory", Limiter: lim}},
	}
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sum.Strategies[0]
	if s.Admitted == 0 || s.Rejected == 0 {
		t.Fatalf("not contended: %d admitted, %d rejected", s.Admitted, s.Rejected)
	}
	if s.Overshoot != 0 {
		t.Errorf("a correct limiter under skewed clocks: overshoot %d (peak %d, %d events), want 0", s.Overshoot, s.Peak, s.OvershootEvent)
	}
}

// Under the default skew of the window limiters (5ms) a worker whose clock runs ahead writes
// a window's first count, or prunes the log, by its clock: a request from a worker behind
// reaches Redis later after its own now than its delay alone says, and at a window of a few
// milliseconds often more than a window later (the counter expired, the log pruned). Those are
// left unjudged; what is judged must show a correct atomic script at 0.
func TestAtomicWindowScriptsShowNoOvershootUnderTheDefaultSkew(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 100})
	defer rdb.Close()
	for _, k := range []limiter.Kind{limiter.SlidingWindow, limiter.FixedWindow} {
		for _, window := range []time.Duration{2 * time.Millisecond, 10 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s/%s", k, window), func(t *testing.T) {
				lim, err := limiter.New(k, limiter.Lua, rdb, limiter.Config{Limit: 5, Window: window})
				if err != nil {
					t.Fatal(err)
				}
				cfg := bench.Config{
					RunID: "test", Limiter: k, Limit: 5, Window: window, Workers: 16, Skew: limiter.DefaultSkew(k, 5, window),
					Duration: 700 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
					KeyFor:     func(s string, i int) string { return fmt.Sprintf("t:{%s}:%s:%d", t.Name(), s, i) },
					Strategies: []bench.StrategyRun{{Name: "lua", Limiter: lim, EpochAligned: true}},
				}
				sum, err := bench.New(cfg).Run(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				s := sum.Strategies[0]
				t.Logf("admitted %d rejected %d unjudged %d peak %d", s.Admitted, s.Rejected, s.Unjudged, s.Peak)
				if s.Errors != 0 || s.Admitted == 0 {
					t.Fatalf("%d errors, %d admitted: the run proves nothing", s.Errors, s.Admitted)
				}
				if s.Overshoot != 0 {
					t.Errorf("skew %s at a %s window: overshoot %d (peak %d, %d events), want 0", cfg.Skew, window, s.Overshoot, s.Peak, s.OvershootEvent)
				}
			})
		}
	}
}
