package limitapp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestTwoCounterRoutesAdmitExactlyTheLimitInASequence(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	for _, r := range twoCounterRoutes() {
		t.Run(string(r.Pattern), func(t *testing.T) {
			before, all := sequence(t, target(t, app.URL(r.Pattern)), freshKey(t), 3*testLimit)
			if before != testLimit || all != testLimit {
				t.Errorf("%d admitted before the first refusal and %d in all of %d one after another; want %d and %d",
					before, all, 3*testLimit, testLimit, testLimit)
			}
		})
	}
}

func TestHttprateNeverAdmitsMoreThanTheLimitInABurstAndTheCheckThenUpdateDoes(t *testing.T) {
	app := StartOn(t, redistest.Shared(t).Client(t), longWindow)
	for _, p := range []Pattern{Httprate, HttprateRedis} {
		t.Run(string(p), func(t *testing.T) {
			tg := target(t, app.URL(p))
			for range 5 {
				if got := burst(t, tg, freshKey(t), 6*testLimit); got != testLimit {
					t.Fatalf("a burst of %d at once admitted %d; want exactly %d", 6*testLimit, got, testLimit)
				}
			}
		})
	}
	untilOver(t, target(t, app.URL(CounterCheckThenUpdate)), func(n int64) bool { return n > testLimit })
}

func TestTwoCounterKeyPatternsFindEveryKeyARouteWritesAndNoOtherClients(t *testing.T) {
	app := Start(t, longWindow)
	ctx := context.Background()
	for _, p := range []Pattern{HttprateRedis, CounterCheckThenUpdate} { // httprate's own counter is in memory
		key := freshKey(t)
		for _, k := range []string{key, key + "0"} {
			if _, err := target(t, app.URL(p)).Acquire(ctx, k, httptarget.Call{}); err != nil {
				t.Fatal(err)
			}
		}
		pattern := strings.ReplaceAll(app.KeyPattern(p), "{key}", key)
		keys, err := app.Redis.Keys(ctx, pattern).Result()
		if err != nil || len(keys) != 1 || !strings.HasSuffix(keys[0], ":"+key) {
			t.Errorf("%s: %s found %v, %v; want the one counter of this client's window", p, pattern, keys, err)
			continue
		}
		if ttl := app.Redis.PTTL(ctx, keys[0]).Val(); ttl <= 0 {
			t.Errorf("%s: %s has no TTL", p, keys[0])
		}
	}
}

// twoCounterRoutes are the routes of the two-counter estimate.
func twoCounterRoutes() []Route {
	var out []Route
	for _, r := range Routes() {
		if r.Kind == limiter.SlidingWindowCounter {
			out = append(out, r)
		}
	}
	return out
}

// judgedLoad sends bursts of requests for one fresh key from 8 callers at once for about windows
// windows, each judged as an endpoint's is, by the kind's model: each limiter decided on its own
// clock between the request's sending and its answer. It returns the overshoot found and the
// refusals proven wrong.
func judgedLoad(t *testing.T, url string, cfg Config, windows int) (overshoot.CheckResult, int64) {
	t.Helper()
	m := limiter.SlidingWindowCounter.Describe().Model
	l := overshoot.Limits{Limit: cfg.Limit, Window: cfg.Window}
	ev := overshoot.NewEvidence(overshoot.Spec{Model: m, Limits: l, Clock: m.Clock(l, false), Timing: overshoot.OnEndpoint})
	refusals := refusal.New(refusal.Spec{Kind: string(limiter.SlidingWindowCounter), Model: m, Limit: cfg.Limit,
		Window: cfg.Window.Microseconds(), Server: true, Horizon: time.Second.Microseconds()})
	tg, key := target(t, url), freshKey(t)
	origin := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	deadline := origin.Add(time.Duration(windows) * cfg.Window)
	for worker := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint64(0); time.Now().Before(deadline); seq++ {
				if seq%20 == 19 { // an idle spell of most of a window now and then
					time.Sleep(cfg.Window * 3 / 4)
				}
				got, err := tg.Acquire(context.Background(), key, httptarget.Call{Worker: worker, Seq: seq})
				d := evidence.Decision{SentUs: got.Sent.Sub(origin).Microseconds(), RepliedUs: got.Received.Sub(origin).Microseconds() + 1,
					Outcome: evidence.Refused}
				d.ClockLoUs, d.ClockHiUs = d.SentUs, d.RepliedUs
				switch {
				case err != nil:
					d.Outcome = evidence.Unknown
				case got.Allowed:
					d.Outcome = evidence.Admitted
					ev.Admit(d, func() {})
				}
				mu.Lock()
				refusals.Record(d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	refusals.JudgeBefore(refusal.Forever)
	return ev.Finish(), refusals.Count
}

func TestTwoCounterRoutesEarnTheirVerdictsFromTheModel(t *testing.T) {
	if testing.Short() {
		t.Skip("loads each route for a few seconds")
	}
	cfg := Config{Limit: 5, Window: 250 * time.Millisecond}
	app := StartOn(t, redistest.Shared(t).Client(t), cfg)
	for _, r := range twoCounterRoutes() {
		t.Run(string(r.Pattern), func(t *testing.T) {
			res, falseRejects := judgedLoad(t, app.URL(r.Pattern), cfg, 8)
			switch r.Want {
			case Exact:
				if res.Overshoot > 0 || falseRejects > 0 {
					t.Errorf("a correct two-counter: overshoot %+v, %d false rejects; want neither", res, falseRejects)
				}
			case Overshoot:
				if res.Overshoot == 0 {
					t.Errorf("a check-then-update two-counter under 8 callers at once: %+v; want an overshoot proven", res)
				}
			}
		})
	}
}
