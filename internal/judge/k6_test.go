package judge_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limitapp"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// k6 cannot run here (its Go module is AGPL, which the module list marks not to use, and Debian
// packages none), so its format is tested on lines written as k6 writes them: real requests to
// limitapp's routes, each timed as k6's tracer times it (lib/netext/httpext/tracer.go: the
// sending from the connection ready to the request written, the waiting to the response's
// first byte, the receiving to the body read) and written as k6's JSON output writes a
// request's trail (internal/output/json: every point at the trail's end time, durations in
// milliseconds, the tags of the request).

// k6Load sends workers' requests to url (a fresh key for {key}) for d and returns the k6 JSON
// lines of them.
func k6Load(t *testing.T, url string, workers int, d time.Duration) string {
	t.Helper()
	url = strings.ReplaceAll(url, "{key}", fmt.Sprintf("k6.%d", time.Now().UnixNano()))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, TLSClientConfig: &tls.Config{}}}
	defer client.CloseIdleConnections()
	path := filepath.Join(t.TempDir(), "k6.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	w := &k6Output{enc: json.NewEncoder(f), seen: map[string]bool{}}
	w.enc.SetEscapeHTML(false)
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				trail, err := k6Request(client, url)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				w.write(trail)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return path
}

// k6Trail is one request as k6's tracer times it.
type k6Trail struct {
	end                                  time.Time
	blocked, sending, waiting, receiving time.Duration
	status                               int
	url                                  string
}

func k6Request(client *http.Client, url string) (k6Trail, error) {
	var start, connReady, wrote, firstByte time.Time
	trace := &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { connReady = time.Now() },
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
		GotFirstResponseByte: func() { firstByte = time.Now() },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
	if err != nil {
		return k6Trail{}, err
	}
	start = time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return k6Trail{}, err
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck // read to its end, as k6 does
	resp.Body.Close()
	end := time.Now()
	return k6Trail{end: end, blocked: connReady.Sub(start), sending: wrote.Sub(connReady), waiting: firstByte.Sub(wrote),
		receiving: end.Sub(firstByte), status: resp.StatusCode, url: url}, nil
}

// k6Output writes trails as k6's JSON output does: a Metric line the first time a metric is
// seen, then the trail's points in Trail.SaveSamples' order, at its end time, with its tags.
type k6Output struct {
	enc  *json.Encoder
	seen map[string]bool
}

func (o *k6Output) write(tr k6Trail) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	tags := map[string]string{"expected_response": strconv.FormatBool(tr.status < 400), "group": "", "method": "GET",
		"name": tr.url, "proto": "HTTP/1.1", "scenario": "default", "status": strconv.Itoa(tr.status), "url": tr.url}
	for _, p := range []struct {
		metric string
		value  float64
	}{{"http_reqs", 1}, {"http_req_duration", ms(tr.sending + tr.waiting + tr.receiving)}, {"http_req_blocked", ms(tr.blocked)},
		{"http_req_connecting", 0}, {"http_req_tls_handshaking", 0}, {"http_req_sending", ms(tr.sending)},
		{"http_req_waiting", ms(tr.waiting)}, {"http_req_receiving", ms(tr.receiving)}} {
		if !o.seen[p.metric] {
			o.seen[p.metric] = true
			typ, contains := "trend", "time"
			if p.metric == "http_reqs" {
				typ, contains = "counter", "default"
			}
			o.enc.Encode(map[string]any{"type": "Metric", "metric": p.metric, "data": map[string]any{ //nolint:errcheck // a test file
				"name": p.metric, "type": typ, "contains": contains, "thresholds": []string{}, "submetrics": nil}})
		}
		o.enc.Encode(map[string]any{"type": "Point", "metric": p.metric, "data": map[string]any{ //nolint:errcheck // a test file
			"time": tr.end, "value": p.value, "tags": tags}})
	}
}

func TestK6RecordsOfARealRunAreJudged(t *testing.T) {
	app := limitapp.StartOn(t, redistest.Shared(t).Client(t), appConfig)
	for _, c := range []struct {
		pattern limitapp.Pattern
		kind    limiter.Kind
		want    string
	}{
		{limitapp.CheckThenUpdate, limiter.FixedWindow, verdict.Overshoot},
		{limitapp.FirstHit, limiter.FixedWindow, verdict.Exact},
		{limitapp.ConcurrencyNaive, limiter.Concurrency, verdict.Overshoot},
		{limitapp.ConcurrencyAtomic, limiter.Concurrency, verdict.Exact},
	} {
		t.Run(string(c.pattern), func(t *testing.T) {
			workers := 8
			if c.kind == limiter.Concurrency {
				workers = 16
			}
			// A busy machine may leave a run too thin to judge; a few runs settle it, and none may
			// read a correct limiter wrong.
			var got verdict.Verdict
			for attempt := 0; attempt < 3 && got.Word != c.want; attempt++ {
				path := k6Load(t, app.URL(c.pattern), workers, 5*appConfig.Window)
				res, err := judge.Run(context.Background(), judge.Options{Files: []string{path}, Limiter: c.kind,
					Limit: appConfig.Limit, Window: appConfig.Window, Hold: appConfig.Hold})
				if err != nil {
					t.Fatal(err)
				}
				if res.Recorded.Files[0].Format != "k6" {
					t.Fatalf("read as %q", res.Recorded.Files[0].Format)
				}
				got = res.Verdicts[0]
				if c.want == verdict.Exact && got.Tone() == verdict.ToneBad {
					t.Fatalf("a correct limiter blamed: %s %s", got.Word, got.Text)
				}
			}
			if got.Word != c.want {
				t.Fatalf("%s: %s, want %s", got.Word, got.Text, c.want)
			}
		})
	}
}
