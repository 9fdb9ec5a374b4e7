package hammer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// connectCluster is a Deps.Connect for a test cluster.
func connectCluster(t *testing.T, c *redistest.Cluster) func(context.Context, int) (redis.UniversalClient, bench.Target, error) {
	return func(ctx context.Context, poolSize int) (redis.UniversalClient, bench.Target, error) {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), PoolSize: poolSize})
		t.Cleanup(func() { cc.Close() })
		return cc, bench.Target{Kind: "cluster", Addr: c.Masters[0].Addr}, nil
	}
}

// runKey is a key the run has written on one of the cluster's masters.
func runKey(ctx context.Context, c *redistest.Cluster, prefix string) (string, bool) {
	for _, m := range c.Masters {
		cl := redis.NewClient(&redis.Options{Addr: m.Addr})
		keys, _, _ := cl.Scan(ctx, 0, prefix+"*", 1000).Result()
		cl.Close()
		if len(keys) > 0 {
			return keys[0], true
		}
	}
	return "", false
}

// On a cluster the script strategy's calls go through rueidis (in rounds on shared connections,
// and one call a round per worker without --conns), and a slot of the run's keys migrated to
// another master mid-run (ASK while it moves, MOVED after) costs no overshoot and no error.
func TestAClusterRunHoldsAcrossASlotMigration(t *testing.T) {
	for _, conns := range []int{0, 4} {
		t.Run(fmt.Sprintf("conns=%d", conns), func(t *testing.T) {
			c := redistest.StartCluster(t, 3, 0)
			o := baseOptions()
			o.Strategies, o.Workers, o.Conns, o.Requests, o.Duration = []limiter.Strategy{limiter.Lua}, 32, conns, 0, 4*time.Second
			ctx := context.Background()
			migrated := make(chan string, 1)
			go func() {
				defer close(migrated)
				deadline := time.Now().Add(3 * time.Second)
				for time.Now().Before(deadline) {
					if key, ok := runKey(ctx, c, o.Prefix+":{"+o.RunID+"}:lua"); ok { // the limiter key's slot
						from, to, err := c.MigrateSlot(ctx, key)
						if err != nil {
							migrated <- err.Error()
							return
						}
						t.Logf("migrated %s from %s to %s", key, from, to)
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
				migrated <- "no key of the run appeared"
			}()
			res, err := Run(ctx, o, Deps{Connect: connectCluster(t, c), Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if problem := <-migrated; problem != "" {
				t.Fatal(problem)
			}
			s := res.Summary.Strategies[0]
			if s.Attempts == 0 || s.Errors != 0 || s.Overshoot != 0 || !s.Contended {
				t.Fatalf("lua across a migration: %d attempts, %d errors, overshoot %d, contended %v; want attempts, 0, 0, contended",
					s.Attempts, s.Errors, s.Overshoot, s.Contended)
			}
		})
	}
}
