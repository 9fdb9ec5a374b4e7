package demoapp

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/go-redis/redis_rate/v10"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	sredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// redisRate mounts go-redis/redis_rate as its README shows (NewLimiter on the client, Allow
// per request), in a handler that answers 429 with Retry-After when res.Allowed is 0. Its
// limit is GCRA: a burst of Limit, one more every Window/Limit.
func (a *App) redisRate() http.Handler {
	lim := redis_rate.NewLimiter(a.Redis)
	limit := redis_rate.Limit{Rate: int(a.cfg.Limit), Burst: int(a.cfg.Limit), Period: a.cfg.Window}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := lim.Allow(r.Context(), Key(RedisRate, r.PathValue("key")), limit)
		if err == nil && res.Allowed == 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(res.RetryAfter.Seconds()+1)))
		}
		answer(w, err == nil && res.Allowed > 0, err)
	})
}

// ulule mounts github.com/ulule/limiter as its README shows for net/http: a Redis store with a
// prefix, a limiter.Rate, stdlib.NewMiddleware around the handler, the key read from the path
// (WithKeyGetter) instead of the client's IP. Its store counts in a window opened by the first
// hit (INCRBY, PEXPIRE when the count is new), and the middleware answers 429 once it is
// reached. The store loads its scripts when it is made, so it is made at the route's first
// request (the application may start before its Redis answers: a proxy the run starts); a
// failure answers 500 and is tried again at the next.
func (a *App) ulule() http.Handler {
	var mu sync.Mutex
	var handler http.Handler
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if handler == nil {
			store, err := sredis.NewStoreWithOptions(a.Redis, limiter.StoreOptions{Prefix: "limitapp:lib:ulule", MaxRetry: 3}) // keys: prefix:key
			if err != nil {
				mu.Unlock()
				answer(w, false, fmt.Errorf("ulule/limiter's redis store: %w", err))
				return
			}
			rate := limiter.Rate{Period: a.cfg.Window, Limit: a.cfg.Limit}
			mw := stdlib.NewMiddleware(limiter.New(store, rate), stdlib.WithKeyGetter(func(r *http.Request) string { return r.PathValue("key") }))
			handler = mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
		}
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
}
