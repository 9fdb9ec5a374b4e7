package limiter_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// writes is the server's count of changes (every write, a PEXPIRE included), from INFO.
func writes(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "rdb_changes_since_last_save:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("INFO persistence has no rdb_changes_since_last_save")
	return 0
}

func TestShippedScriptsWriteNothingWhenTheyReject(t *testing.T) {
	srv := redistest.Start(t) // its own server: the change counter is server-wide
	rdb := srv.Client(t)
	ctx := context.Background()
	cfg := limiter.Config{Limit: 2, Window: time.Second, StaleAfter: 10 * time.Second, Rate: 1, Burst: 2}
	for _, k := range limiter.Kinds() {
		for _, s := range []limiter.Strategy{limiter.Lua, limiter.Function} {
			t.Run(string(k)+"/"+string(s), func(t *testing.T) {
				lim, err := limiter.New(k, s, rdb, cfg)
				if err != nil {
					t.Fatal(err)
				}
				key := "reject:{" + string(k) + "-" + string(s) + "}"
				if k == limiter.SlidingWindow {
					// Members two windows old: a rejection must not prune them (the count skips them).
					rdb.ZAdd(ctx, key, redis.Z{Score: float64(t0.Add(-5 * time.Second).UnixMilli()), Member: "old"})
				}
				for i := 0; i < 2; i++ {
					if d := acquire(t, lim, key, t0); !d.Allowed {
						t.Fatalf("admit %d of 2 was rejected", i+1)
					}
				}
				written := k.Describe().DecisionKey(key, t0, cfg.Window)
				if ttl := rdb.PTTL(ctx, written).Val(); ttl <= 0 {
					t.Fatalf("after two admits %s has TTL %s; every written key must expire", written, ttl)
				}
				before := writes(t, rdb)
				if d := acquire(t, lim, key, t0); d.Allowed {
					t.Fatal("the third call within the limit of 2 was admitted")
				}
				if after := writes(t, rdb); after != before {
					t.Fatalf("a rejected call changed the dataset %d times; it needs no write", after-before)
				}
			})
		}
	}
}
