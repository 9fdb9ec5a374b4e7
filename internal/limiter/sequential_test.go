package limiter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
)

// sequentialStrategies make the same decisions one call at a time: the strategies differ only
// under concurrency, so a sequential scenario must come out identical for each.
var sequentialStrategies = []limiter.Strategy{
	limiter.Naive, limiter.Multi, limiter.Watch, limiter.Lua, limiter.Eval, limiter.Function, limiter.Custom,
}

var t0 = time.UnixMilli(1_800_000_000_000) // a fixed clock: results are exact

func forEachStrategy(t *testing.T, k limiter.Kind, cfg limiter.Config, fn func(t *testing.T, lim limiter.Limiter, key string)) {
	rdb := server(t).Client(t)
	for _, s := range sequentialStrategies {
		t.Run(string(s), func(t *testing.T) {
			c := cfg
			if s == limiter.Custom {
				c.CustomSource = limiter.ScriptFor(k).Source
			}
			lim, err := limiter.New(k, s, rdb, c)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, lim, keyFor(t))
		})
	}
}

func acquire(t *testing.T, lim limiter.Limiter, key string, at time.Time) limiter.Decision {
	t.Helper()
	d, err := lim.Acquire(context.Background(), key, at)
	if err != nil {
		t.Fatalf("acquire at %s: %v", at.Format("15:04:05.000"), err)
	}
	return d
}

func wantTTL(t *testing.T, key string, min, max time.Duration) {
	t.Helper()
	rdb := server(t).Client(t)
	ttl, err := rdb.PTTL(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < min || ttl > max {
		t.Fatalf("TTL of %s is %s, want between %s and %s (every written key must expire)", key, ttl, min, max)
	}
}

func TestConcurrencyLimitReleaseAndStaleReclaim(t *testing.T) {
	cfg := limiter.Config{Limit: 3, StaleAfter: 10 * time.Second}
	forEachStrategy(t, limiter.Concurrency, cfg, func(t *testing.T, lim limiter.Limiter, key string) {
		var held []limiter.Decision
		for i := 1; i <= 3; i++ {
			d := acquire(t, lim, key, t0)
			if !d.Allowed || d.Count != int64(i) || d.Member == "" {
				t.Fatalf("acquire %d of limit 3: %+v, want allowed with %d in flight", i, d, i)
			}
			held = append(held, d)
		}
		if d := acquire(t, lim, key, t0); d.Allowed || d.Count != 3 {
			t.Fatalf("4th acquire at limit 3: %+v, want rejected seeing 3", d)
		}
		wantTTL(t, key, 9*time.Second, 10*time.Second)
		if err := lim.Release(context.Background(), key, held[0]); err != nil {
			t.Fatal(err)
		}
		if d := acquire(t, lim, key, t0.Add(time.Second)); !d.Allowed || d.Count != 3 {
			t.Fatalf("acquire after a release: %+v, want allowed with 3 in flight", d)
		}
		// Members whose release never came are reclaimed once older than stale_after.
		if d := acquire(t, lim, key, t0.Add(10*time.Second)); !d.Allowed || d.Count != 2 {
			t.Fatalf("acquire when two members are 10s old: %+v, want them reclaimed and 2 in flight", d)
		}
	})
}

func TestFixedWindowCountsPerWindowAndRollsOver(t *testing.T) {
	cfg := limiter.Config{Limit: 2, Window: time.Second}
	forEachStrategy(t, limiter.FixedWindow, cfg, func(t *testing.T, lim limiter.Limiter, key string) {
		for i := 1; i <= 2; i++ {
			if d := acquire(t, lim, key, t0.Add(100*time.Millisecond)); !d.Allowed || d.Count != int64(i) {
				t.Fatalf("request %d of 2: %+v", i, d)
			}
		}
		if d := acquire(t, lim, key, t0.Add(999*time.Millisecond)); d.Allowed || d.Count != 2 {
			t.Fatalf("3rd request in the window: %+v, want rejected at count 2", d)
		}
		wantTTL(t, limiter.WindowKey(key, t0, time.Second), time.Second, 2*time.Second)
		if d := acquire(t, lim, key, t0.Add(time.Second)); !d.Allowed || d.Count != 1 {
			t.Fatalf("first request of the next window: %+v, want allowed at count 1", d)
		}
	})
}

func TestSlidingWindowForgetsOnlyWhatLeftTheWindow(t *testing.T) {
	cfg := limiter.Config{Limit: 2, Window: time.Second}
	forEachStrategy(t, limiter.SlidingWindow, cfg, func(t *testing.T, lim limiter.Limiter, key string) {
		acquire(t, lim, key, t0)
		acquire(t, lim, key, t0.Add(500*time.Millisecond))
		if d := acquire(t, lim, key, t0.Add(999*time.Millisecond)); d.Allowed {
			t.Fatalf("3rd request within one second: %+v, want rejected", d)
		}
		// At t0+1s the first request has left the window (t-1s, t]; the second has not.
		if d := acquire(t, lim, key, t0.Add(time.Second)); !d.Allowed || d.Count != 2 {
			t.Fatalf("request at t0+1s: %+v, want allowed with 2 in the window", d)
		}
		if d := acquire(t, lim, key, t0.Add(1200*time.Millisecond)); d.Allowed {
			t.Fatalf("request at t0+1.2s: %+v, want rejected (t0+0.5s and t0+1s in the window)", d)
		}
		wantTTL(t, key, time.Second, 2*time.Second)
	})
}

func TestTokenBucketBurstRefillAndRetryAfter(t *testing.T) {
	cfg := limiter.Config{Rate: 10, Burst: 3} // a token every 100ms
	forEachStrategy(t, limiter.TokenBucket, cfg, func(t *testing.T, lim limiter.Limiter, key string) {
		for i := 2; i >= 0; i-- {
			if d := acquire(t, lim, key, t0); !d.Allowed || d.Count != int64(i) {
				t.Fatalf("burst request leaving %d: %+v", i, d)
			}
		}
		d := acquire(t, lim, key, t0.Add(40*time.Millisecond))
		if d.Allowed || d.RetryAfter != 60*time.Millisecond {
			t.Fatalf("empty bucket at +40ms: %+v, want rejected with retry after 60ms", d)
		}
		if d := acquire(t, lim, key, t0.Add(100*time.Millisecond)); !d.Allowed || d.Count != 0 {
			t.Fatalf("at +100ms one token has refilled: %+v", d)
		}
		wantTTL(t, key, time.Second, 1400*time.Millisecond)
		// Idle for long, the bucket refills only up to its burst.
		for i := 2; i >= 0; i-- {
			if d := acquire(t, lim, key, t0.Add(time.Hour)); !d.Allowed || d.Count != int64(i) {
				t.Fatalf("after an hour idle, request leaving %d: %+v", i, d)
			}
		}
		if d := acquire(t, lim, key, t0.Add(time.Hour)); d.Allowed {
			t.Fatalf("4th request after an hour idle: %+v, want rejected (burst is 3)", d)
		}
	})
}

// A bucket under steady pressure for a long time must never admit more than its burst plus
// what refilled: the script keeps time as a double of some 1.8e12 ms, whose rounding on every
// admit would otherwise hand out a sliver of a token each time (at 3,000/s, a dozen too many
// in 20s).
func TestTokenBucketScriptGainsNothingFromRounding(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	script := redis.NewScript(limiter.ScriptFor(limiter.TokenBucket).Source)
	if err := script.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	const rate, burst, steps, perStep = 3000, 3000, 20_000, 4 // 4 requests a millisecond for 3 tokens
	key := keyFor(t)
	var admitted int64
	for from := 0; from < steps; from += 1000 {
		pipe := rdb.Pipeline()
		var cmds []*redis.Cmd
		for ms := from; ms < from+1000; ms++ {
			for range perStep {
				cmds = append(cmds, script.EvalSha(ctx, pipe, []string{key}, rate, burst, t0.UnixMilli()+int64(ms), 1))
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			if reply, _ := c.Slice(); reply[0].(int64) == 1 {
				admitted++
			}
		}
	}
	// The last call is at steps-1 ms: burst, plus a token every 1/3 ms since the first call.
	bound := int64(burst + rate*(steps-1)/1000)
	if admitted > bound {
		t.Fatalf("admitted %d over %dms, %d more than burst %d plus refill allow (%d)", admitted, steps, admitted-bound, burst, bound)
	}
	if admitted < bound-bound/1000 {
		t.Fatalf("admitted %d of %d: rounding made the bucket far stricter than its rate", admitted, bound)
	}
}
