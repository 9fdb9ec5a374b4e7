package demoapp

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	"golang.org/x/time/rate"
)

// Limiters that keep their counts in the application's memory answer in microseconds, far
// faster than a Redis round trip: a load of the same workers sends many more requests to them,
// and nearly all are refused. Each route here keeps one count per client key in this process.

// goLimiterMemory mounts github.com/sethvargo/go-limiter's memory store as its README shows
// for net/http (memorystore.New, httplimit.NewMiddleware, Handle), the key read from the path:
// a fixed window of Limit a Window per key, its windows a grid phased by the key's first
// request (the store's bucket starts then and refills at each tick after it).
func (a *App) goLimiterMemory() (http.Handler, error) {
	store, err := memorystore.New(&memorystore.Config{Tokens: uint64(a.cfg.Limit), Interval: a.cfg.Window})
	if err != nil {
		return nil, fmt.Errorf("demoapp: go-limiter's memory store: %w", err)
	}
	a.closers = append(a.closers, func() { store.Close(context.Background()) }) //nolint:errcheck // stopping its sweeper
	mw, err := httplimit.NewMiddleware(store, func(r *http.Request) (string, error) { return r.PathValue("key"), nil })
	if err != nil {
		return nil, fmt.Errorf("demoapp: go-limiter's middleware: %w", err)
	}
	return mw.Handle(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })), nil
}

// memoryBucket is golang.org/x/time/rate's token bucket, one per key: a burst of Limit,
// refilled continuously at Limit per Window, Allow deciding each request.
func (a *App) memoryBucket() http.Handler {
	var buckets sync.Map // key -> *rate.Limiter
	every := rate.Every(a.cfg.Window / time.Duration(a.cfg.Limit))
	return Decider(func(_ context.Context, key string) (bool, error) {
		b, _ := buckets.LoadOrStore(key, rate.NewLimiter(every, int(a.cfg.Limit)))
		return b.(*rate.Limiter).Allow(), nil
	})
}

// memorySliding keeps each key's admits of the last Window in memory under a lock and admits
// while fewer than Limit are there: an exact sliding window.
func (a *App) memorySliding() http.Handler {
	var mu sync.Mutex
	logs := map[string][]time.Time{}
	return Decider(func(_ context.Context, key string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		log := logs[key]
		for len(log) > 0 && !log[0].After(now.Add(-a.cfg.Window)) {
			log = log[1:]
		}
		ok := int64(len(log)) < a.cfg.Limit
		if ok {
			log = append(log, now)
		}
		logs[key] = log
		return ok, nil
	})
}

// memoryCheckThenUpdate counts each key's epoch-aligned window in memory, but reads the count,
// decides, and adds to it apart, with the application's work (an audit record written, here a
// pause of 100µs) between: two requests that read before either adds both pass, as two that
// GET before either INCRs on Redis do.
func (a *App) memoryCheckThenUpdate() http.Handler {
	type window struct {
		index int64
		count atomic.Int64
	}
	var windows sync.Map // key -> *atomic.Pointer[window]
	return Decider(func(_ context.Context, key string) (bool, error) {
		v, _ := windows.LoadOrStore(key, &atomic.Pointer[window]{})
		cur := v.(*atomic.Pointer[window])
		index := time.Now().UnixMilli() / a.cfg.Window.Milliseconds()
		w := cur.Load()
		if w == nil || w.index != index {
			fresh := &window{index: index}
			if cur.CompareAndSwap(w, fresh) {
				w = fresh
			} else {
				w = cur.Load()
			}
		}
		if w.count.Load() >= a.cfg.Limit { // the check
			return false, nil
		}
		time.Sleep(100 * time.Microsecond) // the application's work between its check and its update
		w.count.Add(1)                     // the update
		return true, nil
	})
}
