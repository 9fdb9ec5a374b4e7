package limiter_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/trace"
)

// BenchmarkDecision measures one decision (acquire, and release when admitted) of every limiter
// x strategy against a real redis-server, one call at a time: ns/op is mostly the round trips
// each strategy needs, allocs/op the client-side cost.
func BenchmarkDecision(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	for _, k := range limiter.Kinds() {
		for _, s := range limiter.Strategies() {
			if !limiter.Supports(k, s) {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", k, s), func(b *testing.B) {
				cfg := limiter.Config{Limit: 1 << 30, Window: time.Second, StaleAfter: time.Minute, Rate: 1e9, Burst: 1 << 30}
				if s == limiter.Custom {
					cfg.CustomSource = limiter.ScriptFor(k).Source
				}
				lim, err := limiter.New(k, s, rdb, cfg)
				if err != nil {
					b.Fatal(err)
				}
				key := fmt.Sprintf("bench:{%s:%s}", k, s)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					d, err := lim.Acquire(ctx, key, time.Now())
					if err != nil {
						b.Fatal(err)
					}
					if err := lim.Release(ctx, key, d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkVirtualClock is the cost of the virtual clock's wrapper: redis_rate's calling style
// (a GCRA that reads TIME) run raw on the server's clock and wrapped on the virtual one, side by
// side on one server. Compare the two ns/op (and the server's usec_per_call in INFO
// commandstats for evalsha): the wrapper's coroutine and xpcall per redis.call.
func BenchmarkVirtualClock(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	src, err := os.ReadFile("../../testdata/limiters/gcra_server_time.lua")
	if err != nil {
		b.Fatal(err)
	}
	for _, clock := range []string{"server", "virtual"} {
		b.Run(clock, func(b *testing.B) {
			c, err := contract.Compile(contract.Spec{Args: "{burst} {limit} {window_s} {cost}", Allowed: "reply[1] > 0", Clock: clock}, limiter.DefaultContract(limiter.TokenBucket))
			if err != nil {
				b.Fatal(err)
			}
			lim, err := limiter.New(limiter.TokenBucket, limiter.Custom, rdb, limiter.Config{Limit: 100_000, Burst: 100_000, Rate: 100_000, Window: time.Second, CustomSource: string(src), Contract: c})
			if err != nil {
				b.Fatal(err)
			}
			key := "bench:{virtual:" + clock + "}"
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lim.Acquire(ctx, key, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecording is what recording a decision's commands costs (package trace): naive
// (four commands, each recorded with its reply and times) and lua (one call) against a real
// redis-server, with a recorder in the context and without, side by side. Compare ns/op and
// allocs/op of each pair: recording must add no allocation, and a few hundred ns at most to a
// decision of tens of µs.
func BenchmarkRecording(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	for _, s := range []limiter.Strategy{limiter.Naive, limiter.Lua} {
		for _, recorded := range []bool{false, true} {
			name := fmt.Sprintf("%s/recorded=%v", s, recorded)
			b.Run(name, func(b *testing.B) {
				lim, err := limiter.New(limiter.Concurrency, s, rdb, limiter.Config{Limit: 1 << 30, StaleAfter: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				rec := trace.NewRecorder(time.Now(), 0, 1, false)
				if recorded {
					ctx = trace.With(ctx, rec)
				}
				key := "bench:{recording:" + string(s) + "}"
				b.ReportAllocs()
				for b.Loop() {
					rec.Begin(0)
					d, err := lim.Acquire(ctx, key, time.Now())
					if err != nil {
						b.Fatal(err)
					}
					rec.Keep(d.Allowed, 0, 0, rec.Since(), 0)
					if err := lim.Release(ctx, key, d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
