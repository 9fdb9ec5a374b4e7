package hammer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/demoapp"
	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/redistrace"
)

// The demonstration (--http-demo) needs nothing of the user's: a test application (internal/
// demoapp) on loopback beside the embedded Redis, its naive and atomic routes of the limiter's
// kind side by side as two HTTP targets, traced in that Redis.

// demoRoutes are the routes the demonstration drives, naive then atomic, by kind.
var demoRoutes = map[limiter.Kind][2]demoapp.Pattern{
	limiter.FixedWindow: {demoapp.CheckThenUpdate, demoapp.IncrFirst},
	limiter.Concurrency: {demoapp.ConcurrencyNaive, demoapp.ConcurrencyAtomic},
}

// demoHost stands for the application's address in the targets until it listens.
const demoHost = "127.0.0.1:0"

// DemoHold is what the demonstration's concurrency routes hold each admitted request, unless
// --hold says otherwise: long beside a loaded machine's latency, so every admit is evidence.
const DemoHold = 200 * time.Millisecond

// applyDemo turns --http-demo into the run it stands for: the kind (fixed-window unless
// --limiter says concurrency), the two targets, the trace, and unless --assert says otherwise
// naive.overshoot>0; anything of the user's (a Redis, a target, Redis strategies) is refused.
// REDIS_URL is not read: the demonstration has its own.
func (fl *Flags) applyDemo() error {
	for _, name := range []string{"url", "addr", "http", "http-keys", "http-redis-proxy", "strategies", "script"} {
		if fl.Given(name) {
			return exitcode.Usagef("--http-demo runs a test application of its own beside its own Redis: drop --%s", name)
		}
	}
	if !fl.Given("limiter") {
		fl.Kind = string(limiter.FixedWindow)
	}
	routes, ok := demoRoutes[limiter.Kind(fl.Kind)]
	if !ok {
		return exitcode.Usagef("--http-demo shows %s and %s limiters, not %s", limiter.FixedWindow, limiter.Concurrency, fl.Kind)
	}
	if limiter.Kind(fl.Kind) == limiter.Concurrency && !fl.Given("hold") {
		fl.Hold = DemoHold
		given := fl.Given
		fl.Given = func(flag string) bool { return flag == "hold" || given(flag) }
	}
	fl.Limiter.HTTP.Targets = []string{"naive=http://" + demoHost + "/" + string(routes[0]) + "/{key}",
		"atomic=http://" + demoHost + "/" + string(routes[1]) + "/{key}"}
	fl.HasTarget, fl.RedisTrace = true, true
	if len(fl.Assert) == 0 {
		// What the demonstration shows: the naive route caught (in place of the check every
		// --http run makes of it), the atomic one held to the limit as ever.
		fl.Assert = []string{"naive.overshoot>0"}
	}
	return nil
}

// startDemo starts the embedded Redis, the tracer on it (MONITOR; through its proxy where the
// embedded server is in-process, which has no MONITOR) and the application, its client on that
// Redis (or the proxy), then points the targets at it. The returned func stops them.
func (s *session) startDemo(ctx context.Context) (func(), error) {
	var stops []func()
	stop := func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	spawned, err := embedded.Start(s.opts.Embedded)
	if err != nil {
		return stop, err
	}
	stops = append(stops, spawned.Stop)
	conn := redisconn.Options{Addrs: []string{spawned.Addr}, Timeout: s.deps.Timeout, PoolSize: 16, NoCheckoutProbe: true}
	rdb, _, err := redisconn.Open(ctx, conn, func(string) string { return "" })
	if err != nil {
		return stop, err
	}
	stops = append(stops, func() { rdb.Close() })
	s.rdb, s.spawned, s.target = rdb, spawned, bench.Target{Kind: spawned.Kind, Addr: spawned.Addr}
	if spawned.Kind == embedded.KindMemory {
		s.opts.RedisProxy = demoHost
	}
	if err := s.startTrace(ctx); err != nil {
		return stop, err
	}
	appRedis := spawned.Addr
	if s.tracer.Source() == redistrace.SourceProxy {
		appRedis = s.tracer.ProxyAddr()
	}
	appClient := redis.NewClient(&redis.Options{Addr: appRedis, PoolSize: 4 * s.opts.Workers})
	stops = append(stops, func() { appClient.Close() })
	app, err := demoapp.New(appClient, demoapp.Config{Limit: s.opts.Limit, Window: s.opts.Window, Hold: s.opts.Hold})
	if err != nil {
		return stop, err
	}
	stops = append(stops, app.Close)
	stopApp, err := app.Listen()
	if err != nil {
		return stop, err
	}
	stops = append(stops, func() { stopApp() }) //nolint:errcheck // stopping: the run is over
	s.opts.HTTP = slices.Clone(s.opts.HTTP)
	for i := range s.opts.HTTP {
		s.opts.HTTP[i].URL = strings.Replace(s.opts.HTTP[i].URL, demoHost, app.Addr, 1)
	}
	s.deps.notice(fmt.Sprintf("demo: a test application on http://%s (internal/demoapp), its Redis a throw-away %s on %s",
		app.Addr, spawned.Kind, spawned.Addr))
	return stop, nil
}
