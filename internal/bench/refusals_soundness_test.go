package bench_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// A correct limiter is never blamed for a refusal, on a real redis-server, under every shape of
// load the hammer accepts: both profiles, skewed clocks, an open loop, many keys, a bucket whose
// refill interval a double cannot hold exactly (its rounding), and every library-style fixture on
// its own contract and clock. Every run must be contended: 0 false rejects of a limiter that
// never refused would prove nothing. (Pipelined connections are in internal/hammer; a cluster,
// a failover, killed and paused servers in cmd.)

type loadShape struct {
	name string
	set  func(*bench.Config)
}

var loadShapes = []loadShape{
	{"steady", func(c *bench.Config) { c.Profile = limiter.ProfileSteady }},
	{"bursty", func(c *bench.Config) { c.Profile = limiter.ProfileBursty }},
	{"skew 5ms", func(c *bench.Config) { c.Skew = 5 * time.Millisecond }},
	{"open loop", func(c *bench.Config) { c.OpenRate = 8000 }},
	{"8 keys", func(c *bench.Config) { c.KeyCount, c.Limit, c.Rate = 8, 4, 4 }},
	{"inexact interval", func(c *bench.Config) { c.Limit, c.Rate = 30, 30 }}, // 33.33...ms per token
}

func soundnessDuration() time.Duration {
	if testing.Short() {
		return 700 * time.Millisecond
	}
	return 1500 * time.Millisecond
}

func TestShippedScriptsAreNeverBlamedForARefusal(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 300})
	defer rdb.Close()
	for _, k := range limiter.Kinds() {
		for _, shape := range loadShapes {
			t.Run(string(k)+"/"+shape.name, func(t *testing.T) {
				cfg := bench.Config{
					RunID: "test", Limiter: k, Limit: 20, Window: time.Second, Rate: 20, Workers: 64,
					Duration: soundnessDuration(), Hold: 2 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
					StaleAfter: 10 * time.Second, Profile: limiter.DefaultProfile(k), Skew: limiter.DefaultSkew(k, 20, time.Second),
					KeyFor: func(s string, i int) string { return fmt.Sprintf("t:{%s}:%s:%d", t.Name(), s, i) },
				}
				shape.set(&cfg)
				for _, s := range []limiter.Strategy{limiter.Lua, limiter.Eval, limiter.Function} {
					lim, err := limiter.New(k, s, rdb, limiter.Config{Limit: cfg.Limit, Window: cfg.Window, StaleAfter: cfg.StaleAfter, Rate: cfg.Rate, Burst: cfg.Limit})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Strategies = append(cfg.Strategies, bench.StrategyRun{Name: string(s), Limiter: lim, EpochAligned: true})
				}
				sum, err := bench.New(cfg).Run(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range sum.Strategies {
					checkNotBlamed(t, s)
				}
			})
		}
	}
}

func TestCorrectFixturesAreNeverBlamedForARefusal(t *testing.T) {
	srv := redistest.Start(t)
	for _, c := range correctScripts() {
		for _, shape := range []loadShape{loadShapes[0], loadShapes[2], loadShapes[3], {"default", func(*bench.Config) {}}} {
			t.Run(c.file+"/"+shape.name, func(t *testing.T) {
				st := refusalRun(t, srv, c, soundnessDuration(), shape.set)
				checkNotBlamed(t, st)
			})
		}
	}
}

func checkNotBlamed(t *testing.T, s bench.StrategySnapshot) {
	t.Helper()
	t.Logf("%s: admitted %d rejected %d errors %d false rejects %d", s.Name, s.Admitted, s.Rejected, s.Errors, s.FalseRejects)
	if s.Errors != 0 || s.Rejected == 0 || s.RefusalsUnjudged != "" {
		t.Fatalf("%s: not a clean contended judged run: %d errors %v, %d rejected, unjudged %q", s.Name, s.Errors, s.ErrorsByKind, s.Rejected, s.RefusalsUnjudged)
	}
	if s.FalseRejects != 0 {
		t.Errorf("%s: a correct limiter blamed for %d refusals: first %+v, tightest %+v", s.Name, s.FalseRejects, s.FirstFalseReject, s.Tightest)
	}
}

// refusalRun hammers one fixture at the default load (64 workers, limit 20, window 1s, hold
// 2ms), changed by set, for d, with the refusal rules its contract implies, as the hammer
// derives them.
func refusalRun(t *testing.T, srv *redistest.Server, c powerCase, d time.Duration, set func(*bench.Config)) bench.StrategySnapshot {
	t.Helper()
	cfg := defaultLoad(t, c.kind, customStrategy(t, srv, c.file, c.kind, c.spec), d)
	if set != nil {
		set(&cfg)
	}
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Strategies[0]
}

// givingUp is an optimistic limiter as many libraries write it: WATCH, read, MULTI/EXEC, and
// after a few aborted transactions it stops retrying and answers "limited".
type givingUp struct{ limiter.Limiter }

func (g givingUp) Acquire(ctx context.Context, key string, now time.Time) (limiter.Decision, error) {
	d, err := g.Limiter.Acquire(ctx, key, now)
	if err != nil && strings.Contains(err.Error(), "changed on every one of") {
		return limiter.Decision{}, nil // gave up: refused
	}
	return d, err
}

// An optimistic limiter that gives up after a few retries refuses while it has room: the
// aborts come from other workers' writes (admits and releases), not from a full limiter. A
// finding about the algorithm, not noise: the hammer's own watch retries up to 1,000 times and
// counts a give-up as an error (fail-closed), never as a refusal.
func TestAnOptimisticLimiterThatGivesUpRefusesWithRoom(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr, PoolSize: 100})
	defer rdb.Close()
	for _, k := range []limiter.Kind{limiter.Concurrency, limiter.SlidingWindow} {
		t.Run(string(k), func(t *testing.T) {
			w, err := limiter.New(k, limiter.Watch, rdb, limiter.Config{Limit: 20, Window: time.Second, StaleAfter: 10 * time.Second, MaxRetries: 2})
			if err != nil {
				t.Fatal(err)
			}
			cfg := bench.Config{
				RunID: "test", Limiter: k, Limit: 20, Window: time.Second, Workers: 64, StaleAfter: 10 * time.Second,
				Duration: 2 * time.Second, Hold: 2 * time.Millisecond, KeyCount: 1, Horizon: 5 * time.Second,
				Profile: limiter.DefaultProfile(k), Skew: limiter.DefaultSkew(k, 20, time.Second),
				KeyFor:     func(s string, i int) string { return fmt.Sprintf("t:{%s}:%s:%d", t.Name(), s, i) },
				Strategies: []bench.StrategyRun{{Name: "watch-3", Limiter: givingUp{w}}},
			}
			// A give-up with room needs contention at the moment the key had room, which a
			// busy machine gives less often: 2s runs until one is caught (at most 10).
			for run := 1; ; run++ {
				sum, err := bench.New(cfg).Run(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				s := sum.Strategies[0]
				t.Logf("run %d: admitted %d, refused %d, of which %d with room (tightest %+v)", run, s.Admitted, s.Rejected, s.FalseRejects, s.Tightest)
				if s.FalseRejects > 0 {
					break
				}
				if run == 10 {
					t.Fatalf("an optimistic limiter giving up after 3 tries was never caught refusing with room in %d runs", run)
				}
			}
		})
	}
}

// leaky is a concurrency limiter of 2 whose releases free nothing from leakFrom on: too strict
// from then.
type leaky struct {
	mu       sync.Mutex
	held     int
	leakFrom time.Time
}

// roundTrip is how long an in-memory limiter takes to answer, as Redis on loopback does: one
// that answers at once has the workers refuse millions of times a second, and the run then
// measures its judges' bookkeeping (under the race detector, minutes of it), not its limiter.
const roundTrip = 50 * time.Microsecond

func (l *leaky) Acquire(context.Context, string, time.Time) (limiter.Decision, error) {
	time.Sleep(roundTrip)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held >= 2 {
		return limiter.Decision{}, nil
	}
	l.held++
	return limiter.Decision{Allowed: true, Member: "m"}, nil
}

func (l *leaky) Release(context.Context, string, limiter.Decision) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Now().Before(l.leakFrom) {
		l.held--
	}
	return nil
}

// A master replaced mid-run may have lost a release it acknowledged, and a correct concurrency
// limiter then rightly holds that slot: refusals are judged only up to the last read that
// found the masters unchanged. Those before stand; none after is claimed, and the run says so.
func TestConcurrencyRefusalsAreJudgedOnlyWhileTheMastersAreUnchanged(t *testing.T) {
	run := func(t *testing.T, leakAfter, replacedAfter time.Duration, unreadable bool) bench.StrategySnapshot {
		t.Helper()
		begin := time.Now()
		masters := func(context.Context) (string, error) {
			switch {
			case unreadable:
				return "", errors.New("NOPERM info")
			case time.Since(begin) > replacedAfter:
				return "promoted", nil
			}
			return "original", nil
		}
		cfg := bench.Config{
			RunID: "masters", Limiter: limiter.Concurrency, Limit: 2, Workers: 8, Hold: time.Millisecond, StaleAfter: time.Minute,
			Duration: 1500 * time.Millisecond, KeyCount: 1, Horizon: time.Second, Masters: masters,
			KeyFor:     func(s string, i int) string { return "masters:" + s },
			Strategies: []bench.StrategyRun{{Name: "leaky", Limiter: &leaky{leakFrom: begin.Add(leakAfter)}}},
		}
		sum, err := bench.New(cfg).Run(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return sum.Strategies[0]
	}
	const never = time.Hour
	// Too strict only after the master changed: nothing is claimed, and the run says why.
	s := run(t, 900*time.Millisecond, 700*time.Millisecond, false)
	if s.FalseRejects != 0 || s.NoRefusalJudged || !strings.Contains(s.RefusalsUnjudged, "a master was replaced or restarted by") {
		t.Errorf("too strict after the change: %d false rejects (none judged %v), unjudged %q", s.FalseRejects, s.NoRefusalJudged, s.RefusalsUnjudged)
	}
	// The same limiter with the masters unchanged is caught: the silence above is the rule's.
	if s := run(t, 900*time.Millisecond, never, false); s.FalseRejects == 0 || s.RefusalsUnjudged != "" {
		t.Errorf("masters unchanged: %d false rejects, unjudged %q", s.FalseRejects, s.RefusalsUnjudged)
	}
	// Too strict from the start: what was proven before the change stands.
	if s := run(t, 0, 700*time.Millisecond, false); s.FalseRejects == 0 || s.FirstFalseReject.SentMs > 700 {
		t.Errorf("too strict before the change: %d false rejects, first %+v", s.FalseRejects, s.FirstFalseReject)
	}
	// Masters that cannot be read: no refusal is judged at all.
	if s := run(t, 0, never, true); !s.NoRefusalJudged || s.FalseRejects != 0 || !strings.Contains(s.RefusalsUnjudged, "cannot be ruled out") {
		t.Errorf("masters unreadable: %d false rejects, none judged %v, %q", s.FalseRejects, s.NoRefusalJudged, s.RefusalsUnjudged)
	}
}
