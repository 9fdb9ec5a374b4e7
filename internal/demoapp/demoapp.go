// Package demoapp serves rate limiters as applications deploy them: one net/http route per
// limiter pattern in front of a Redis, each keyed by the client identity in its last path
// segment (/window/incr-first/{key}). The naive patterns race as applications' code does; the
// atomic ones and the limiter libraries no one here wrote (go-redis/redis_rate, ulule/limiter,
// and for the two-counter sliding window go-chi/httprate) are correct, so a judge of HTTP limiters can be shown to tell them apart. hammer --http-demo
// serves it beside the embedded Redis; the tests serve it through internal/limitapp.
package demoapp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
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
	// TwoCounters limits a client twice, as APIs with a rate and a quota do: an epoch-aligned
	// window of Limit and a day's quota (DayQuota times the limit, never reached in a test),
	// written without a script: GET both counters, decide here, then INCR both: requests that
	// all read before any INCR all pass.
	TwoCounters Pattern = "window/two-counters"
	// Watch is a first-hit window in an optimistic transaction: WATCH, GET, and INCR in a
	// MULTI/EXEC only while under the limit, retried when the EXEC is aborted (go-redis's
	// Watch, as its documentation writes the increment).
	Watch Pattern = "window/watch"
	// IncrTTL INCRs first and decides by its count, then reads the TTL and sets the expiry when
	// the key has none (the idiom that mends an INCR whose EXPIRE never came).
	IncrTTL Pattern = "window/incr-ttl"
	// IncrThenReads INCRs first (PEXPIRE on the first hit) and decides by its count, then reads
	// the count and its TTL back in one pipeline for the X-RateLimit headers.
	IncrThenReads Pattern = "window/incr-then-reads"
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
		{Pattern: TwoCounters, Kind: limiter.FixedWindow, Want: Overshoot},
		{Pattern: Watch, Kind: limiter.FixedWindow, Want: Exact},
		{Pattern: IncrTTL, Kind: limiter.FixedWindow, Want: Exact},
		{Pattern: IncrThenReads, Kind: limiter.FixedWindow, Want: Exact},
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

// DayQuota is how many times its window's limit the two-counters route allows a client a day.
const DayQuota = 100_000

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

// App is the application: its routes and the Redis its limiters keep their state in.
type App struct {
	// Addr is the server's host:port once it serves (Serve).
	Addr  string
	Redis redis.UniversalClient
	cfg   Config
	held  map[Pattern]*heldCount
	seq   atomic.Uint64 // members of the sorted sets
	mux   *http.ServeMux
	// closers stop what the routes keep running (a memory store's sweeper): Close.
	closers []func()
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

// New builds every route in front of rdb (a shared server: the routes' keys all begin with
// "limitapp:" or redis_rate's "rate:limitapp:").
func New(rdb redis.UniversalClient, cfg Config) (*App, error) {
	if cfg.Limit <= 0 || cfg.Window <= 0 {
		return nil, fmt.Errorf("demoapp: a limit and a window are needed, got %+v", cfg)
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = cfg.Hold + 10*time.Second
	}
	a := &App{Redis: rdb, cfg: cfg, held: map[Pattern]*heldCount{ConcurrencyNaive: {}, ConcurrencyAtomic: {}}, mux: http.NewServeMux()}
	goLimiter, err := a.goLimiterMemory()
	if err != nil {
		return nil, err
	}
	for p, h := range map[Pattern]http.Handler{
		CheckThenUpdate:       Decider(a.checkThenUpdate),
		IncrFirst:             Decider(a.incrFirst),
		Gateway:               http.HandlerFunc(a.gateway),
		FirstHit:              Decider(a.firstHit),
		Epoch:                 Decider(a.epoch),
		EpochNoTTL:            Decider(a.epochNoTTL),
		BlockThree:            Decider(a.blockThree),
		TwoCounters:           Decider(a.twoCounters),
		Watch:                 Decider(a.watch),
		IncrTTL:               Decider(a.incrTTL),
		IncrThenReads:         http.HandlerFunc(a.incrThenReads),
		SlidingLog:            Decider(a.slidingLog),
		Bucket:                Decider(a.bucket),
		ConcurrencyNaive:      a.concurrency(ConcurrencyNaive, a.naiveAcquire),
		ConcurrencyAtomic:     a.concurrency(ConcurrencyAtomic, a.atomicAcquire),
		RedisRate:             a.redisRate(),
		Ulule:                 a.ulule(),
		GoLimiterMemory:       goLimiter,
		MemoryBucket:          a.memoryBucket(),
		MemorySliding:         a.memorySliding(),
		MemoryCheckThenUpdate: a.memoryCheckThenUpdate(),
	} {
		a.mux.Handle("/"+string(p)+"/{key}", h)
	}
	for p, h := range a.counterHandlers() {
		a.mux.Handle("/"+string(p)+"/{key}", h)
	}
	return a, nil
}

// Close stops what the routes keep running beside the server.
func (a *App) Close() {
	for _, c := range a.closers {
		c()
	}
}

// Handler serves every route.
func (a *App) Handler() http.Handler { return a.mux }

// Serve serves h on l until stop, which shuts the server down (waiting up to ten seconds for
// the requests in flight) and reports why it had stopped on its own, if it had.
func Serve(l net.Listener, h http.Handler) (stop func() error) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // closing: what it had to say is Serve's
		return <-done
	}
}

// Listen serves the app on a free loopback port (Addr) until stop.
func (a *App) Listen() (stop func() error, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a.Addr = l.Addr().String()
	return Serve(l, a.mux), nil
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

// Key is the route's Redis key for a client: limitapp:<pattern, ':' for '/'>[:<part>...]:<key>.
func Key(p Pattern, key string, parts ...string) string {
	k := "limitapp:" + strings.ReplaceAll(string(p), "/", ":")
	for _, part := range parts {
		k += ":" + part
	}
	return k + ":" + key
}

// Decider serves a route whose decision is one function of the request's key: 200 when it
// admits, 429 when it refuses, 500 when Redis failed.
func Decider(decide func(ctx context.Context, key string) (bool, error)) http.Handler {
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
