package limitapp

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/demoapp"
)

// PerProcess is express-rate-limit #212's story: an application whose limiter keeps its count
// in memory, deployed as two processes behind a round-robin front. Each process's window is
// correct; together they admit twice the limit.
type PerProcess struct {
	// Addr is the front's host:port; Backends the two processes'.
	Addr     string
	Backends [2]string
}

// URL is the front's URL with {key} where the client identity goes.
func (p *PerProcess) URL() string { return "http://" + p.Addr + "/window/{key}" }

// StartPerProcess serves two processes, each with an in-memory window of cfg.Limit per
// cfg.Window (opened by a key's first hit), and a front that sends each request to the next in
// turn; all stop when the test ends.
func StartPerProcess(t testing.TB, cfg Config) *PerProcess {
	t.Helper()
	p := &PerProcess{}
	var targets [2]*url.URL
	for i := range p.Backends {
		mux := http.NewServeMux()
		mux.Handle("/window/{key}", demoapp.Decider(newMemoryWindow(cfg).decide))
		p.Backends[i] = serve(t, mux)
		targets[i] = &url.URL{Scheme: "http", Host: p.Backends[i]}
	}
	var next atomic.Uint64
	front := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[next.Add(1)%2])
		},
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256},
	}
	p.Addr = serve(t, front)
	return p
}

// memoryWindow is one process's count per key, in a window opened by the key's first hit.
type memoryWindow struct {
	limit  int64
	window time.Duration
	mu     sync.Mutex
	keys   map[string]*windowCount
}

type windowCount struct {
	start time.Time
	n     int64
}

func newMemoryWindow(cfg Config) *memoryWindow {
	return &memoryWindow{limit: cfg.Limit, window: cfg.Window, keys: map[string]*windowCount{}}
}

func (m *memoryWindow) decide(_ context.Context, key string) (bool, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.keys[key]
	if c == nil || now.Sub(c.start) >= m.window {
		c = &windowCount{start: now}
		m.keys[key] = c
	}
	if c.n >= m.limit {
		return false, nil
	}
	c.n++
	return true, nil
}
