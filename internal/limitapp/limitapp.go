// Package limitapp serves internal/demoapp's limiters for tests: a real net/http server on a
// free loopback port in front of a real redis-server (internal/redistest), a single node or a
// cluster, both stopped when the test ends; and two processes that count in memory behind a
// round-robin front (perprocess.go). It is used only by tests.
package limitapp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/demoapp"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The patterns, what they earn and how they are configured: internal/demoapp's.
type (
	Pattern = demoapp.Pattern
	Want    = demoapp.Want
	Route   = demoapp.Route
	Config  = demoapp.Config
)

// The patterns (demoapp's).
const (
	CheckThenUpdate   = demoapp.CheckThenUpdate
	IncrFirst         = demoapp.IncrFirst
	Gateway           = demoapp.Gateway
	FirstHit          = demoapp.FirstHit
	Epoch             = demoapp.Epoch
	EpochNoTTL        = demoapp.EpochNoTTL
	BlockThree        = demoapp.BlockThree
	TwoCounters       = demoapp.TwoCounters
	Watch             = demoapp.Watch
	IncrTTL           = demoapp.IncrTTL
	IncrThenReads     = demoapp.IncrThenReads
	SlidingLog        = demoapp.SlidingLog
	Bucket            = demoapp.Bucket
	ConcurrencyNaive  = demoapp.ConcurrencyNaive
	ConcurrencyAtomic = demoapp.ConcurrencyAtomic
	RedisRate         = demoapp.RedisRate
	Ulule             = demoapp.Ulule
	// Limiters that count in the application's memory, writing nothing to Redis.
	GoLimiterMemory       = demoapp.GoLimiterMemory
	MemoryBucket          = demoapp.MemoryBucket
	MemorySliding         = demoapp.MemorySliding
	MemoryCheckThenUpdate = demoapp.MemoryCheckThenUpdate
	// The two-counter sliding window: go-chi/httprate in memory and on a Redis counter, and a
	// check-then-update on two Redis counters.
	Httprate               = demoapp.Httprate
	HttprateRedis          = demoapp.HttprateRedis
	CounterCheckThenUpdate = demoapp.CounterCheckThenUpdate
)

// The verdicts the patterns are built to earn (demoapp's).
const (
	Exact     = demoapp.Exact
	Overshoot = demoapp.Overshoot
	TooStrict = demoapp.TooStrict
	Leaks     = demoapp.Leaks
)

// Routes lists every pattern, in display order.
func Routes() []Route { return demoapp.Routes() }

// App is a running application server: demoapp's, with the single node's client (Redis; nil
// in front of a cluster, whose client is the App's own).
type App struct {
	*demoapp.App
	Redis *redis.Client
}

// Start serves every route on a free loopback port, in front of a redis-server of its own;
// both stop when the test ends.
func Start(t testing.TB, cfg Config) *App {
	t.Helper()
	return StartOn(t, redistest.Start(t).Client(t), cfg)
}

// StartOn serves every route in front of rdb (a shared server: the routes' keys all begin
// with "limitapp:" or redis_rate's "rate:limitapp:").
func StartOn(t testing.TB, rdb *redis.Client, cfg Config) *App {
	t.Helper()
	return &App{App: serveApp(t, rdb, cfg), Redis: rdb}
}

// StartOnCluster serves every route in front of a cluster (routes whose keys are in more than
// one slot within one call, block-three's, fail there).
func StartOnCluster(t testing.TB, rdb *redis.ClusterClient, cfg Config) *App {
	t.Helper()
	return &App{App: serveApp(t, rdb, cfg)}
}

func serveApp(t testing.TB, rdb redis.UniversalClient, cfg Config) *demoapp.App {
	t.Helper()
	app, err := demoapp.New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	app.Addr = serve(t, app.Handler())
	return app
}

// serve runs h on a free loopback port until the test ends, and returns its address.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := demoapp.Serve(l, h)
	t.Cleanup(func() {
		if err := stop(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("limitapp: %v", err)
		}
	})
	return l.Addr().String()
}
