package limiter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
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
