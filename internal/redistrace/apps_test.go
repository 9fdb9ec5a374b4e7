package redistrace

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// appConfig is the test application's limit: 20 a second, a concurrency slot held 200 ms.
var appConfig = limitapp.Config{Limit: 20, Window: time.Second, Hold: 200 * time.Millisecond}

// load drives each URL (with {key} for its identity) from workers at once for d, as hammer
// --http does, and tells the tracer every request.
func load(t *testing.T, tr *Tracer, urls []string, workers int, d time.Duration) {
	t.Helper()
	begin := time.Now()
	tr.Begin(begin)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for target, url := range urls {
		url = strings.ReplaceAll(url, "{key}", fmt.Sprintf("%s.%d", tr.ids.RunID, target))
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(begin) < d {
					sent := time.Since(begin).Microseconds()
					resp, err := client.Get(url)
					r := Request{Target: target, Worker: w, SentUs: sent, RepliedUs: time.Since(begin).Microseconds()}
					if err == nil {
						io.Copy(io.Discard, resp.Body) //nolint:errcheck // the status is the answer
						resp.Body.Close()
						r.Admitted, r.Refused = resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusTooManyRequests
					}
					tr.Add(r)
				}
			}()
		}
	}
	wg.Wait()
}

// traceRoutes runs patterns side by side behind app, traced by MONITOR on rdb's nodes (or
// through a proxy the app's client is given), and returns each one's summary.
func traceRoutes(t *testing.T, app *limitapp.App, nodes []*redis.Options, patterns []limitapp.Pattern) []*Summary {
	t.Helper()
	ids := Identities{RunID: fmt.Sprintf("t%07x", time.Now().UnixNano()&0xfffffff), Keys: 1}
	var urls []string
	for _, p := range patterns {
		ids.Targets = append(ids.Targets, string(p))
		urls = append(urls, app.URL(p))
	}
	tr, err := Start(context.Background(), Config{Identities: ids, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, urls, 32, 1500*time.Millisecond)
	if err := tr.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tr.Summaries()
}

// The routes of the test application, each judged by its commands on a single node: every one
// that reads a count and writes it apart is check-then-act, every atomic one atomic, its commands
// counted per admit and per refusal.
func TestEveryRouteIsToldByItsCommands(t *testing.T) {
	srv := redistest.Start(t)
	app := limitapp.StartOn(t, srv.Client(t), appConfig)
	nodes := []*redis.Options{srv.Client(t).Options()}
	for _, group := range [][]limitapp.Pattern{
		{limitapp.CheckThenUpdate, limitapp.IncrFirst, limitapp.Gateway, limitapp.Watch},
		{limitapp.TwoCounters, limitapp.IncrTTL, limitapp.IncrThenReads, limitapp.RedisRate},
		{limitapp.ConcurrencyNaive, limitapp.ConcurrencyAtomic, limitapp.Ulule, limitapp.FirstHit},
	} {
		sums := traceRoutes(t, app, nodes, group)
		for i, p := range group {
			want := Atomic
			if r := route(p); r.Want == limitapp.Overshoot {
				want = CheckThenAct
			}
			t.Logf("%s: %s %v", p, sums[i], sums[i].Commands)
			if sums[i].Decision != want {
				t.Errorf("%s: %s, want %s", p, sums[i], want)
			}
		}
	}
}

func route(p limitapp.Pattern) limitapp.Route {
	for _, r := range limitapp.Routes() {
		if r.Pattern == p {
			return r
		}
	}
	return limitapp.Route{}
}
