package httptarget_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The pieces an HTTP strategy will be made of, put together without the engine: a target's
// instants judged by the interval evidence (windows, buckets) or the held spans (concurrency),
// against real endpoints. A correct endpoint is never blamed; a wrong one is caught.

var evidenceConfig = limitapp.Config{Limit: 5, Window: 200 * time.Millisecond, Hold: 50 * time.Millisecond}

const evidenceWorkers = 8

// checkerFor is the evidence an endpoint of kind is judged by: its model's on the endpoint's
// clock.
func checkerFor(kind limiter.Kind) overshoot.Checker {
	l := overshoot.Limits{Limit: evidenceConfig.Limit, Window: evidenceConfig.Window, Rate: float64(evidenceConfig.Limit) / evidenceConfig.Window.Seconds()}
	m := kind.Describe().Model
	return m.Checker(overshoot.Spec{Model: m, Limits: l, Clock: m.Clock(l, false), Timing: overshoot.OnEndpoint, Hold: evidenceConfig.Hold}, 0)
}

// load runs evidenceWorkers workers for d, each calling for key one call at a time, and hands
// every admit's interval (on the run's clock, from begin) to c.
func load(t *testing.T, tg *httptarget.Target, key string, c overshoot.Checker, d time.Duration) {
	t.Helper()
	begin := time.Now()
	var wg sync.WaitGroup
	for w := range evidenceWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := uint64(0); time.Since(begin) < d; seq++ {
				got, err := tg.Acquire(context.Background(), key, httptarget.Call{Worker: w, Seq: seq})
				if err != nil {
					t.Errorf("%s: %v", tg.URL(), err)
					return
				}
				if got.Allowed {
					c.Admit(evidence.Decision{SentUs: got.Sent.Sub(begin).Microseconds(), RepliedUs: int64((got.Received.Sub(begin) + time.Microsecond - 1) / time.Microsecond)}, func() {})
				}
			}
		}()
	}
	wg.Wait()
}

type endpoint struct {
	name string
	url  string
	kind limiter.Kind
	want limitapp.Want
}

func endpoints(t *testing.T) []endpoint {
	app := limitapp.StartOn(t, redistest.Shared(t).Client(t), evidenceConfig)
	var eps []endpoint
	for _, r := range limitapp.Routes() {
		eps = append(eps, endpoint{string(r.Pattern), app.URL(r.Pattern), r.Kind, r.Want})
	}
	pp := limitapp.StartPerProcess(t, evidenceConfig)
	return append(eps, endpoint{"two processes, a count in memory", pp.URL(), limiter.FixedWindow, limitapp.Overshoot})
}

func TestRealEndpointsAreJudgedByTheirEvidence(t *testing.T) {
	for _, ep := range endpoints(t) {
		t.Run(ep.name, func(t *testing.T) {
			tg, err := httptarget.New(httptarget.Spec{URL: ep.url}, httptarget.Options{Conns: evidenceWorkers, Run: "ev"})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			// Attempts of five windows' load each, until the evidence settles the question: a
			// wrong endpoint proven over its limit; a correct one judged, its evidence's power
			// better than the limit (SPEC section 10: only then does a run read exact). No
			// attempt may blame a correct one.
			limit := evidenceConfig.Limit
			var res overshoot.CheckResult
			var k int64
			var judged bool
			for attempt := range 10 {
				c := checkerFor(ep.kind)
				key := fmt.Sprintf("ev.%d.%s", attempt, strings.NewReplacer("/", ".", " ", "_", ",", "").Replace(ep.name))
				load(t, tg, key, c, 5*evidenceConfig.Window)
				res = c.Finish()
				k, judged = c.CaughtFrom(10 * limit)
				// Too strict is the refusal judges' to find: its blocks leave few admits, so the
				// evidence of overshoot is weak, and only a blame would be wrong.
				if res.Overshoot > 0 || ep.want == limitapp.TooStrict || ep.want == limitapp.Exact && judged && k < limit {
					break
				}
			}
			t.Logf("peak %d overshoot %d unjudged %d, caught from %d (%v)", res.Peak, res.Overshoot, res.Unjudged, k, judged)
			switch {
			case ep.want != limitapp.Overshoot && res.Overshoot > 0:
				t.Errorf("a correct endpoint blamed: %+v", res)
			case ep.want == limitapp.Exact && !(judged && k < limit):
				t.Errorf("10 attempts never judged it: caught from %d (%v) against a limit of %d", k, judged, limit)
			case ep.want == limitapp.Overshoot && res.Overshoot == 0:
				t.Errorf("a wrong endpoint not caught in 10 attempts: %+v", res)
			}
		})
	}
}
