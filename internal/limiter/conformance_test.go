package limiter_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/scripts"
)

const (
	testLimit   = 10
	testWindow  = time.Second // the sliding log is exact while a request reaches Redis within one window of its now
	testRate    = 100.0       // tokens per second
	testWorkers = 64
	minRun      = 400 * time.Millisecond
)

func testConfig(k limiter.Kind, s limiter.Strategy) limiter.Config {
	cfg := limiter.Config{Limit: testLimit, Window: testWindow, StaleAfter: 10 * time.Second, Rate: testRate, Burst: testLimit}
	if s == limiter.Custom {
		cfg.CustomSource = limiter.ScriptFor(k).Source
	}
	return cfg
}

func newChecker(k limiter.Kind) *overshoot.Evidence {
	m := k.Describe().Model
	l := overshoot.Limits{Limit: testLimit, Window: testWindow, Rate: testRate}
	return overshoot.NewEvidence(overshoot.Spec{Model: m, Limits: l, Clock: m.Clock(l, true), Horizon: 4 * time.Second,
		StaleAfter: 10 * time.Second, Now: time.Now})
}

// admitAt is an admit decided at now, numbered for its release, answered just now: it reached
// the limiter at most that long after its now.
func admitAt(ids *atomic.Uint64, now time.Time) evidence.Decision {
	return evidence.Decision{ID: ids.Add(1), Outcome: evidence.Admitted, NowUs: now.UnixMicro(), ClockLoUs: now.UnixMicro(), ClockHiUs: now.UnixMicro(),
		AtMs: now.UnixMilli(), LateUs: time.Since(now).Microseconds() + 1}
}

type loadResult struct {
	check              overshoot.CheckResult
	admitted, rejected int64
}

// hammer drives lim from testWorkers goroutines, and lets an independent checker judge what
// was admitted: until the first overshoot (stopOnOvershoot), or else for minRun and until the
// limit was contended; d only bounds it. Concurrency requests hold their slot
// briefly so that admitted requests overlap.
//
// batched drives it as the hammer's --conns does (limiter.Batch): testConns goroutines, each
// sending its share of the workers' calls as one pipeline per round.
func hammer(t *testing.T, k limiter.Kind, lim limiter.Limiter, key string, d time.Duration, stopOnOvershoot, batched bool) loadResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	check := newChecker(k)
	var admitted, rejected atomic.Int64
	var ids atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan error, testWorkers)
	fail := func(err error) {
		if ctx.Err() == nil {
			errs <- err
			cancel()
		}
	}
	goroutines := testWorkers
	if batched {
		goroutines = testConns
	}
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		if batched {
			go func() {
				defer wg.Done()
				b := limiter.NewBatch(lim)
				defer b.Close()
				rounds(ctx, k, b, key, check, &ids, &admitted, &rejected, fail)
			}()
			continue
		}
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				now := time.Now()
				dec, err := lim.Acquire(ctx, key, now)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
						cancel()
					}
					return
				}
				if !dec.Allowed {
					rejected.Add(1)
					continue
				}
				admitted.Add(1)
				d := admitAt(&ids, now)
				check.Admit(d, func() {})
				if k.Describe().Releases {
					// Long enough that even watch, slowed by its retries, fills every slot.
					time.Sleep(20 * time.Millisecond)
					check.Release(d.ID)
					if err := lim.Release(context.Background(), key, dec); err != nil {
						errs <- err
						cancel()
						return
					}
				}
			}
		}()
	}
	if stopOnOvershoot {
		go func() {
			for ctx.Err() == nil && check.Result().Overshoot == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
		}()
	} else {
		// At least minRun, then until the limit has been contended (a loaded machine may need
		// longer to fill it, watch's retries most of all), within d.
		go func() {
			start := time.Now()
			for ctx.Err() == nil && (time.Since(start) < minRun || rejected.Load() == 0) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("decision failed: %v", err)
	}
	return loadResult{check: check.Finish(), admitted: admitted.Load(), rejected: rejected.Load()}
}

// testConns is how many connections the batched hammer shares the testWorkers among.
const testConns = 4

// rounds is one connection of the batched hammer: each round sends its workers' acquires as
// one batch; for concurrency the admitted ones then hold their slot and are released in one
// batch, recorded in the checker first (before their release is sent).
func rounds(ctx context.Context, k limiter.Kind, b *limiter.Batch, key string, check *overshoot.Evidence, ids *atomic.Uint64, admitted, rejected *atomic.Int64, fail func(error)) {
	calls := make([]limiter.Call, testWorkers/testConns)
	for ctx.Err() == nil {
		now := time.Now()
		for i := range calls {
			calls[i] = limiter.Call{Key: key, Now: now}
		}
		b.Do(ctx, calls)
		var held []limiter.Call
		var heldIDs []uint64
		for _, c := range calls {
			if c.Err != nil {
				fail(c.Err)
				return
			}
			if !c.Decision.Allowed {
				rejected.Add(1)
				continue
			}
			admitted.Add(1)
			d := admitAt(ids, now)
			check.Admit(d, func() {})
			held = append(held, limiter.Call{Key: key, Release: true, Decision: c.Decision})
			heldIDs = append(heldIDs, d.ID)
		}
		if !k.Describe().Releases || len(held) == 0 {
			continue
		}
		time.Sleep(20 * time.Millisecond)
		for _, id := range heldIDs {
			check.Release(id)
		}
		b.Do(context.Background(), held)
		for _, c := range held {
			if c.Err != nil {
				fail(c.Err)
				return
			}
		}
	}
}

// modes are the ways the conformance suite drives a strategy: its calls one by one from many
// goroutines, and (for a strategy whose decision is one command) batched as --conns runs them,
// through go-redis's pipelines ("batched") and on connections of the batches' own ("direct",
// Config.Direct: the hammer's hot path on a single node).
func modes(s limiter.Strategy) []string {
	if s.RunsScript() {
		return []string{"alone", "batched", "direct"}
	}
	return []string{"alone"}
}

// configFor is cfg for mode: "direct" dials the batches' connections with rdb's options.
func configFor(cfg limiter.Config, mode string, rdb *redis.Client) limiter.Config {
	if mode == "direct" {
		cfg.Direct = rdb.Options()
	}
	return cfg
}

func keyFor(t *testing.T) string {
	return "limitctl-test:{" + strings.NewReplacer("/", ":", " ", "_").Replace(t.Name()) + "}"
}

func TestAtomicStrategiesNeverExceedTheLimit(t *testing.T) {
	rdb := server(t).Client(t)
	for _, k := range limiter.Kinds() {
		for _, s := range []limiter.Strategy{limiter.Lua, limiter.Eval, limiter.Function, limiter.Watch, limiter.Custom} {
			if !limiter.Supports(k, s) {
				continue
			}
			for _, mode := range modes(s) {
				t.Run(fmt.Sprintf("%s/%s/%s", k, s, mode), func(t *testing.T) {
					lim, err := limiter.New(k, s, rdb, configFor(testConfig(k, s), mode, rdb))
					if err != nil {
						t.Fatal(err)
					}
					got := hammer(t, k, lim, keyFor(t), 15*time.Second, false, mode != "alone")
					if got.check.Overshoot != 0 {
						t.Fatalf("%s/%s let %d requests past limit %d (peak %d, %d events)", k, s, got.check.Overshoot, testLimit, got.check.Peak, got.check.OvershootEvent)
					}
					// The run must have pressed on the limit, or "no overshoot" proves nothing.
					if got.rejected == 0 || got.admitted == 0 {
						t.Fatalf("the limit was never contended: %d admitted, %d rejected", got.admitted, got.rejected)
					}
				})
			}
		}
	}
}

func TestNonAtomicStrategiesAreCaughtOvershooting(t *testing.T) {
	rdb := server(t).Client(t)
	cases := []struct {
		kind     limiter.Kind
		strategy limiter.Strategy
	}{
		{limiter.Concurrency, limiter.Naive},
		{limiter.Concurrency, limiter.Multi},
		{limiter.Concurrency, limiter.LuaTSMember},
		{limiter.FixedWindow, limiter.Naive},
		{limiter.FixedWindow, limiter.Multi},
		{limiter.SlidingWindow, limiter.Naive},
		{limiter.SlidingWindow, limiter.Multi},
		{limiter.SlidingWindow, limiter.LuaTSMember},
		{limiter.TokenBucket, limiter.Naive},
		{limiter.TokenBucket, limiter.Multi},
		{limiter.SlidingWindowCounter, limiter.Naive},
	}
	for _, c := range cases {
		for _, mode := range modes(c.strategy) {
			t.Run(fmt.Sprintf("%s/%s/%s", c.kind, c.strategy, mode), func(t *testing.T) {
				lim, err := limiter.New(c.kind, c.strategy, rdb, configFor(testConfig(c.kind, c.strategy), mode, rdb))
				if err != nil {
					t.Fatal(err)
				}
				// Stops as soon as the checker has evidence; 15s is only a bound.
				got := hammer(t, c.kind, lim, keyFor(t), 15*time.Second, true, mode != "alone")
				if got.check.Overshoot == 0 {
					t.Fatalf("%s/%s showed no overshoot in 15s (peak %d, %d admitted)", c.kind, c.strategy, got.check.Peak, got.admitted)
				}
			})
		}
	}
}

func TestLuaStrategySurvivesScriptFlush(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	for _, k := range limiter.Kinds() {
		t.Run(string(k), func(t *testing.T) {
			lim, err := limiter.New(k, limiter.Lua, rdb, testConfig(k, limiter.Lua))
			if err != nil {
				t.Fatal(err)
			}
			key := keyFor(t)
			if _, err := lim.Acquire(ctx, key, time.Now()); err != nil {
				t.Fatal(err)
			}
			sha := limiter.ScriptFor(k).SHA1()
			if cached, _ := rdb.ScriptExists(ctx, sha).Result(); !cached[0] {
				t.Fatalf("after one call the script %s is not in the cache", sha)
			}
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := lim.Acquire(ctx, key, time.Now()); err != nil {
				t.Fatalf("the first call after SCRIPT FLUSH failed: %v", err)
			}
		})
	}
}

func TestFunctionStrategyReloadsAFlushedLibrary(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	lim, err := limiter.New(limiter.Concurrency, limiter.Function, rdb, testConfig(limiter.Concurrency, limiter.Function))
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	d, err := lim.Acquire(ctx, keyFor(t), time.Now())
	if err != nil || !d.Allowed {
		t.Fatalf("FCALL with the library missing: allowed=%v err=%v, want the library reloaded and the request allowed", d.Allowed, err)
	}
	libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: scripts.LibraryName}).Result()
	if err != nil || len(libs) != 1 {
		t.Fatalf("library %q not loaded after the call: %v %v", scripts.LibraryName, libs, err)
	}
}
