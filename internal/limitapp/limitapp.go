// Package limitapp serves rate limiters as applications deploy them, for tests: a real net/http
// server on a free loopback port in front of a real redis-server (internal/redistest), one
// route per limiter pattern, each keyed by the client identity in its last path segment
// (/window/atomic/{key}). The naive patterns race as applications' code does; the atomic ones
// and the limiter libraries no one here wrote (go-redis/redis_rate, ulule/limiter, and for the
// two-counter sliding window go-chi/httprate) are correct, so a judge of HTTP limiters can be
// shown to tell them apart. It is used only by tests.
package limitapp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// Pattern is one route: a limiter as some application or library writes it.
type Pattern string

// The patterns. Window patterns allow Limit per Window; the bucket holds Limit tokens and
// refills them once per Window; the concurrency patterns allow Limit at once, each admit
// holding its slot Hold before it is released and answered.
const (
	// CheckThenUpdate reads the window's count, decides in the application, then INCRs: two
	// requests that read before either writes both pass.
	CheckThenUpdate Pattern = "window/check-then-update"
	// IncrFirst INCRs first (PEXPIRE on the first hit) and decides by the count it got.
	IncrFirst Pattern = "window/incr-first"
	// Gateway is Kong's Redis policy before 3.4: the count is read when the request arrives
	// (GET) and added to after the response has gone (INCRBY and EXPIRE, pipelined), on
	// epoch-aligned windows.
	Gateway Pattern = "window/gateway"
	// FirstHit opens a window at the first hit (SET NX PX, then INCR, in one MULTI).
	FirstHit Pattern = "window/first-hit"
	// Epoch counts in epoch-aligned windows of the application's clock (INCR and PEXPIRE in
	// one MULTI on a key named by the window's index).
	Epoch Pattern = "window/epoch"
	// EpochNoTTL counts in epoch-aligned windows, a key per window, and never sets a TTL: its
	// decisions are right, and every window's key stays in Redis for ever (an INCR whose EXPIRE
	// never came: alisaifee/limits#14, spring-cloud-zuul-ratelimit#162).
	EpochNoTTL Pattern = "window/epoch-no-ttl"
	// BlockThree is an atomic first-hit window that, once a client exceeds it, refuses that
	// client for three windows: never too generous, too strict.
	BlockThree Pattern = "window/block-three"
	// SlidingLog keeps a sorted set of admits' times (Redis TIME, µs) and admits when fewer
	// than Limit fall in the last Window, in one Lua script.
	SlidingLog Pattern = "sliding/log"
	// Bucket is a token bucket in one Lua script on Redis TIME.
	Bucket Pattern = "bucket/atomic"
	// ConcurrencyNaive is the seed's ZCARD in the handler, then ZADD: a race.
	ConcurrencyNaive Pattern = "concurrency/naive"
	// ConcurrencyAtomic acquires in one Lua script (reclaim, ZCARD, ZADD) and releases with ZREM.
	ConcurrencyAtomic Pattern = "concurrency/atomic"
	// RedisRate is github.com/go-redis/redis_rate (GCRA): a bucket of Limit per Window.
	RedisRate Pattern = "lib/redis-rate"
	// Ulule is github.com/ulule/limiter with its Redis store and net/http middleware: a window
	// opened by the first hit.
	Ulule Pattern = "lib/ulule"
	// GoLimiterMemory is github.com/sethvargo/go-limiter's memory store behind its net/http
	// middleware: a fixed window per key in the application's memory, answering in microseconds.
	GoLimiterMemory Pattern = "lib/go-limiter-memory"
	// MemoryBucket is golang.org/x/time/rate's token bucket, one per key in memory.
	MemoryBucket Pattern = "memory/bucket"
	// MemorySliding is an exact sliding window kept in memory under a lock.
	MemorySliding Pattern = "memory/sliding"
	// MemoryCheckThenUpdate reads a window's count in memory, works, then adds to it: a race
	// at memory speed.
	MemoryCheckThenUpdate Pattern = "memory/check-then-update"
)

// Want is what a judge of the pattern must find.
type Want string

// The verdicts the patterns are built to earn.
const (
	Exact     Want = "exact"
	Overshoot Want = "OVERSHOOT"
	TooStrict Want = "TOO STRICT"
	// Leaks: correct on the limit's both sides, and its keys never expire (exact, LEAKS where
	// its keys are read).
	Leaks Want = "LEAKS"
)

// Route describes a pattern: the limiter kind it is judged as, and the verdict it earns.
type Route struct {
	Pattern Pattern
	Kind    limiter.Kind
	Want    Want
	// Memory: the route counts in the application's memory and writes nothing to Redis.
	Memory bool
}

// Routes lists every pattern App serves, in display order.
func Routes() []Route {
	return []Route{
		{Pattern: CheckThenUpdate, Kind: limiter.FixedWindow, Want: Overshoot},
		{Pattern: IncrFirst, Kind: limiter.FixedWindow, Want: Exact},
		{Pattern: Gateway, Kind: limiter.FixedWindow, Want: Overshoot},
		{Pattern: FirstHit, Kind: limiter.FixedWindow, Want: Exact},
		{Pattern: Epoch, Kind: limiter.FixedWindow, Want: Exact},
		{Pattern: EpochNoTTL, Kind: limiter.FixedWindow, Want: Leaks},
		{Pattern: BlockThree, Kind: limiter.FixedWindow, Want: TooStrict},
		{Pattern: SlidingLog, Kind: limiter.SlidingWindow, Want: Exact},
		{Pattern: Bucket, Kind: limiter.TokenBucket, Want: Exact},
		{Pattern: ConcurrencyNaive, Kind: limiter.Concurrency, Want: Overshoot},
		{Pattern: ConcurrencyAtomic, Kind: limiter.Concurrency, Want: Exact},
		{Pattern: RedisRate, Kind: limiter.TokenBucket, Want: Exact},
		{Pattern: Ulule, Kind: limiter.FixedWindow, Want: Exact},
		{Pattern: GoLimiterMemory, Kind: limiter.FixedWindow, Want: Exact, Memory: true},
		{Pattern: MemoryCheckThenUpdate, Kind: limiter.FixedWindow, Want: Overshoot, Memory: true},
		{Pattern: MemorySliding, Kind: limiter.SlidingWindow, Want: Exact, Memory: true},
		{Pattern: MemoryBucket, Kind: limiter.TokenBucket, Want: Exact, Memory: true},
		{Pattern: Httprate, Kind: limiter.SlidingWindowCounter, Want: Exact, Memory: true},
		{Pattern: HttprateRedis, Kind: limiter.SlidingWindowCounter, Want: Exact},
		{Pattern: CounterCheckThenUpdate, Kind: limiter.SlidingWindowCounter, Want: Overshoot},
	}
}

// Config is the limit every route of an App enforces.
type Config struct {
	Limit  int64
	Window time.Duration // windows; the bucket refills Limit tokens per Window
	// Hold is how long a concurrency route holds an admitted request's slot before it
	// releases it and answers.
	Hold time.Duration
	// StaleAfter is when a concurrency route reclaims a slot never released; 0 is Hold+10s.
	StaleAfter time.Duration
}

// App is a running application server.
type App struct {
	// Addr is the server's host:port; Redis the server the limiters keep their state in.
	Addr  string
	Redis *redis.Client
	cfg   Config
	held  map[Pattern]*heldCount
	seq   atomic.Uint64 // members of the sorted sets
}

// heldCount is a concurrency route's slots held as the application counts them: from after
// its acquire said yes to before its release is sent, so never more than Redis held.
type heldCount struct{ now, peak atomic.Int64 }

func (h *heldCount) enter() {
	n := h.now.Add(1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
}

func (h *heldCount) leave() { h.now.Add(-1) }

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
	if cfg.Limit <= 0 || cfg.Window <= 0 {
		t.Fatalf("limitapp: a limit and a window are needed, got %+v", cfg)
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = cfg.Hold + 10*time.Second
	}
	a := &App{Redis: rdb, cfg: cfg, held: map[Pattern]*heldCount{ConcurrencyNaive: {}, ConcurrencyAtomic: {}}}
	mux := http.NewServeMux()
	for p, h := range map[Pattern]http.Handler{
		CheckThenUpdate:       decider(a.checkThenUpdate),
		IncrFirst:             decider(a.incrFirst),
		Gateway:               http.HandlerFunc(a.gateway),
		FirstHit:              decider(a.firstHit),
		Epoch:                 decider(a.epoch),
		EpochNoTTL:            decider(a.epochNoTTL),
		BlockThree:            decider(a.blockThree),
		SlidingLog:            decider(a.slidingLog),
		Bucket:                decider(a.bucket),
		ConcurrencyNaive:      a.concurrency(ConcurrencyNaive, a.naiveAcquire),
		ConcurrencyAtomic:     a.concurrency(ConcurrencyAtomic, a.atomicAcquire),
		RedisRate:             a.redisRate(),
		Ulule:                 a.ulule(t),
		GoLimiterMemory:       a.goLimiterMemory(t),
		MemoryBucket:          a.memoryBucket(),
		MemorySliding:         a.memorySliding(),
		MemoryCheckThenUpdate: a.memoryCheckThenUpdate(),
	} {
		mux.Handle("/"+string(p)+"/{key}", h)
	}
	for p, h := range a.counterHandlers() {
		mux.Handle("/"+string(p)+"/{key}", h)
	}
	a.Addr = serve(t, mux)
	return a
}

// serve runs h on a free loopback port until the test ends, and returns its address.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("limitapp: %v", err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // closing at the test's end
		<-done
	})
	return l.Addr().String()
}

// URL is the route's URL with {key} where the client identity goes, as hammer --http takes it.
func (a *App) URL(p Pattern) string { return "http://" + a.Addr + "/" + string(p) + "/{key}" }

// KeyPattern is a SCAN pattern (with {key}) for the Redis keys the route writes for a client,
// as --http-keys takes it: every one ends with the client's key, so one client's pattern never
// matches another's (run.1 is not a prefix match of run.10).
func (a *App) KeyPattern(p Pattern) string {
	pattern := "limitapp:" + strings.ReplaceAll(string(p), "/", ":") + "*:{key}"
	if p == RedisRate {
		return "rate:" + pattern
	}
	return pattern
}

// Held is what a concurrency route's application counted held: now, and the most at once.
func (a *App) Held(p Pattern) (now, peak int64) {
	h := a.held[p]
	if h == nil {
		return 0, 0
	}
	return h.now.Load(), h.peak.Load()
}

// redisKey is the route's Redis key for a client: limitapp:<pattern, ':' for '/'>[:<part>...]:<key>.
func redisKey(p Pattern, key string, parts ...string) string {
	k := "limitapp:" + strings.ReplaceAll(string(p), "/", ":")
	for _, part := range parts {
		k += ":" + part
	}
	return k + ":" + key
}

// decider serves a route whose decision is one function of the request's key: 200 when it
// admits, 429 when it refuses, 500 when Redis failed.
func decider(decide func(ctx context.Context, key string) (bool, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, err := decide(r.Context(), r.PathValue("key"))
		answer(w, ok, err)
	})
}

func answer(w http.ResponseWriter, ok bool, err error) {
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case ok:
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusTooManyRequests)
	}
}
