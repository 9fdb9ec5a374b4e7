package demoapp

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// concurrency serves a concurrency route: acquire, hold the slot Hold, release (ZREM), and
// only then answer, so the endpoint keeps the promise hammer --hold judges by: an admitted
// request's slot is held at least Hold after it was taken, and released before the answer.
func (a *App) concurrency(p Pattern, acquire func(ctx context.Context, k, member string) (bool, error)) http.Handler {
	held := a.held[p]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		k, member := Key(p, r.PathValue("key")), a.member()
		ok, err := acquire(ctx, k, member)
		if err != nil || !ok {
			answer(w, ok, err)
			return
		}
		held.enter()
		time.Sleep(a.cfg.Hold) // the work, whose slot this is
		held.leave()
		answer(w, true, a.Redis.ZRem(context.WithoutCancel(ctx), k, member).Err())
	})
}

// naiveAcquire is the seed's race: reclaim, ZCARD, decide here, ZADD. Requests that all read
// the count before any ZADD all take a slot.
func (a *App) naiveAcquire(ctx context.Context, k, member string) (bool, error) {
	now := time.Now()
	if err := a.Redis.ZRemRangeByScore(ctx, k, "-inf", strconv.FormatInt(now.Add(-a.cfg.StaleAfter).UnixMicro(), 10)).Err(); err != nil {
		return false, err
	}
	n, err := a.Redis.ZCard(ctx, k).Result()
	if err != nil || n >= a.cfg.Limit {
		return false, err
	}
	_, err = a.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, k, redis.Z{Score: float64(now.UnixMicro()), Member: member})
		p.PExpire(ctx, k, a.cfg.StaleAfter)
		return nil
	})
	return err == nil, err
}

// acquireScript takes a slot when fewer than limit are held, reclaiming those taken more than
// stale-after ago, by Redis TIME (µs). KEYS: the set. ARGV: limit, stale-after µs, member,
// expiry ms.
var acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], string.format('%.0f', now), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)

func (a *App) atomicAcquire(ctx context.Context, k, member string) (bool, error) {
	n, err := acquireScript.Run(ctx, a.Redis, []string{k}, a.cfg.Limit, a.cfg.StaleAfter.Microseconds(), member, a.cfg.StaleAfter.Milliseconds()).Int64()
	return n == 1, err
}
