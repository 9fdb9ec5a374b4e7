package demoapp

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/httprate"
	"github.com/redis/go-redis/v9"
)

// The two-counter sliding window (sliding-window-counter): the previous fixed window's count,
// weighted by the share of it still inside the sliding window, plus the current one's.
const (
	// Httprate is github.com/go-chi/httprate as its README shows it, LimitBy around the handler,
	// the key read from the path: its in-memory counter, windows aligned to the limiter's start,
	// the weighted share rounded, decided under a mutex.
	Httprate Pattern = "counter/httprate"
	// HttprateRedis is httprate over a LimitCounter on Redis, as go-chi/httprate-redis keeps it
	// (a counter per key and window, INCRBY and PEXPIRE pipelined, both windows read with MGET), in
	// one process: httprate's mutex makes each decision whole.
	HttprateRedis Pattern = "counter/httprate-redis"
	// CounterCheckThenUpdate reads both windows' counters in the application, decides, then INCRs:
	// two requests that read before either writes both pass.
	CounterCheckThenUpdate Pattern = "counter/check-then-update"
)

// counterHandlers are the two-counter routes' handlers.
func (a *App) counterHandlers() map[Pattern]http.Handler {
	key := func(r *http.Request) (string, error) { return r.PathValue("key"), nil }
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	limit, window := int(a.cfg.Limit), a.cfg.Window
	return map[Pattern]http.Handler{
		Httprate: httprate.LimitBy(limit, window, key)(ok),
		HttprateRedis: httprate.NewRateLimiter(limit, window, httprate.WithKeyFuncs(key),
			httprate.WithLimitCounter(&redisCounter{rdb: a.Redis})).Handler(ok),
		CounterCheckThenUpdate: Decider(a.counterCheckThenUpdate),
	}
}

// redisCounter is httprate.LimitCounter on Redis: a counter per key and window start, living two
// windows.
type redisCounter struct {
	rdb    redis.UniversalClient
	window time.Duration
}

var _ httprate.LimitCounter = (*redisCounter)(nil)

func (c *redisCounter) Config(_ int, window time.Duration) { c.window = window }

// key names the counter by the client's identity, without the ':' httprate's WithKeyFuncs ends
// every key with.
func (c *redisCounter) key(key string, window time.Time) string {
	return Key(HttprateRedis, strings.TrimSuffix(key, ":"), strconv.FormatInt(window.UnixMilli(), 10))
}

func (c *redisCounter) Increment(key string, window time.Time) error {
	return c.IncrementBy(key, window, 1)
}

func (c *redisCounter) IncrementBy(key string, window time.Time, amount int) error {
	ctx := context.Background()
	k := c.key(key, window)
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.IncrBy(ctx, k, int64(amount))
		p.PExpire(ctx, k, 3*c.window)
		return nil
	})
	return err
}

func (c *redisCounter) Get(key string, current, previous time.Time) (int, int, error) {
	vs, err := c.rdb.MGet(context.Background(), c.key(key, current), c.key(key, previous)).Result()
	if err != nil {
		return 0, 0, err
	}
	var counts [2]int
	for i, v := range vs {
		if s, ok := v.(string); ok {
			if counts[i], err = strconv.Atoi(s); err != nil {
				return 0, 0, err
			}
		}
	}
	return counts[0], counts[1], nil
}

// counterCheckThenUpdate: read this window's and the previous window's counters (epoch-aligned on
// the application's clock) in one MGET, as httprate-redis reads them, decide by the floored
// weighted share here, then INCR and PEXPIRE: two requests that read before either writes both
// pass.
func (a *App) counterCheckThenUpdate(ctx context.Context, key string) (bool, error) {
	now := time.Now().UnixMilli()
	w := a.cfg.Window.Milliseconds()
	index := now / w
	cur := Key(CounterCheckThenUpdate, key, strconv.FormatInt(index, 10))
	prev := Key(CounterCheckThenUpdate, key, strconv.FormatInt(index-1, 10))
	vs, err := a.Redis.MGet(ctx, cur, prev).Result()
	if err != nil {
		return false, err
	}
	var counts [2]int64
	for i, v := range vs {
		if s, ok := v.(string); ok {
			if counts[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				return false, err
			}
		}
	}
	if counts[0]+counts[1]*(w-now%w)/w >= a.cfg.Limit {
		return false, nil
	}
	_, err = a.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, cur)
		p.PExpire(ctx, cur, 2*a.cfg.Window)
		return nil
	})
	return err == nil, err
}
