package demoapp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkThenUpdate: GET, decide here, INCR. Between the GET and the INCR another request's GET
// reads the same count: both pass.
func (a *App) checkThenUpdate(ctx context.Context, key string) (bool, error) {
	k := Key(CheckThenUpdate, key)
	n, err := a.Redis.Get(ctx, k).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	if n >= a.cfg.Limit {
		return false, nil
	}
	count, err := a.Redis.Incr(ctx, k).Result()
	if err == nil && count == 1 {
		err = a.Redis.PExpire(ctx, k, a.cfg.Window).Err()
	}
	return err == nil, err
}

// incrFirst: INCR, then PEXPIRE on the first hit, and the decision by the count INCR returned.
// Correct: each admit's INCR returned a count no higher than the limit in its window (the
// window lasts from the first INCR to the expiry PEXPIRE set, a little longer than Window).
func (a *App) incrFirst(ctx context.Context, key string) (bool, error) {
	k := Key(IncrFirst, key)
	n, err := a.Redis.Incr(ctx, k).Result()
	if err == nil && n == 1 {
		err = a.Redis.PExpire(ctx, k, a.cfg.Window).Err()
	}
	return err == nil && n <= a.cfg.Limit, err
}

// windowIndex is the epoch-aligned window now falls in, by the application's clock.
func (a *App) windowIndex(now time.Time) int64 { return now.UnixMilli() / a.cfg.Window.Milliseconds() }

// gateway is Kong's Redis policy before 3.4: the window's count is read as the request
// arrives, and the request added to it after the response was sent (Kong's log phase), with
// INCRBY and EXPIRE in one pipeline. Every request read before the first INCRBY landed passes.
func (a *App) gateway(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	k := Key(Gateway, r.PathValue("key"), strconv.FormatInt(a.windowIndex(time.Now()), 10))
	n, err := a.Redis.Get(ctx, k).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		answer(w, false, err)
		return
	}
	if n >= a.cfg.Limit {
		answer(w, false, nil)
		return
	}
	answer(w, true, nil)
	w.(http.Flusher).Flush()                                                      // the response has gone: only now is the request counted
	a.Redis.Pipelined(context.WithoutCancel(ctx), func(p redis.Pipeliner) error { //nolint:errcheck // as Kong, a failed count is lost
		p.IncrBy(ctx, k, 1)
		p.PExpire(ctx, k, a.cfg.Window)
		return nil
	})
}

// twoCounters reads the window's count and the day's, admits while both are under their
// limits, then INCRs both (each key's expiry set as it is counted): GET, GET, decide, INCR, INCR.
func (a *App) twoCounters(ctx context.Context, key string) (bool, error) {
	counters := []struct {
		key   string
		limit int64
		ttl   time.Duration
	}{
		{Key(TwoCounters, key, strconv.FormatInt(a.windowIndex(time.Now()), 10)), a.cfg.Limit, 2 * a.cfg.Window},
		{Key(TwoCounters, key, "day"), DayQuota * a.cfg.Limit, 24 * time.Hour},
	}
	for _, c := range counters {
		n, err := a.Redis.Get(ctx, c.key).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return false, err
		}
		if n >= c.limit {
			return false, nil
		}
	}
	_, err := a.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range counters {
			p.Incr(ctx, c.key)
			p.PExpire(ctx, c.key, c.ttl)
		}
		return nil
	})
	return err == nil, err
}

// watch counts in a window opened by the first hit, in an optimistic transaction: the count read
// under WATCH, the INCR (and the expiry, on the first) in a MULTI/EXEC that Redis aborts when
// another request wrote the count meanwhile; an aborted one is tried again.
func (a *App) watch(ctx context.Context, key string) (bool, error) {
	k := Key(Watch, key)
	for {
		admitted := false
		err := a.Redis.Watch(ctx, func(tx *redis.Tx) error {
			n, err := tx.Get(ctx, k).Int64()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			if n >= a.cfg.Limit {
				return nil
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, k)
				if n == 0 {
					p.PExpire(ctx, k, a.cfg.Window)
				}
				return nil
			})
			admitted = err == nil
			return err
		}, k)
		if !errors.Is(err, redis.TxFailedErr) {
			return admitted, err
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
	}
}

// incrTTL: INCR, decided by its count; then TTL, and PEXPIRE when the key has no expiry.
func (a *App) incrTTL(ctx context.Context, key string) (bool, error) {
	k := Key(IncrTTL, key)
	n, err := a.Redis.Incr(ctx, k).Result()
	if err != nil {
		return false, err
	}
	ttl, err := a.Redis.TTL(ctx, k).Result()
	if err == nil && ttl == -1 { // go-redis reads TTL's -1 (no expiry) as -1ns
		err = a.Redis.PExpire(ctx, k, a.cfg.Window).Err()
	}
	return err == nil && n <= a.cfg.Limit, err
}

// incrThenReads: INCR (PEXPIRE on the first hit), decided by its count; then the count and its
// TTL read back in one pipeline for the X-RateLimit-Remaining and -Reset headers.
func (a *App) incrThenReads(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	k := Key(IncrThenReads, r.PathValue("key"))
	n, err := a.Redis.Incr(ctx, k).Result()
	if err == nil && n == 1 {
		err = a.Redis.PExpire(ctx, k, a.cfg.Window).Err()
	}
	if err != nil {
		answer(w, false, err)
		return
	}
	var count *redis.StringCmd
	var ttl *redis.DurationCmd
	_, err = a.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		count, ttl = p.Get(ctx, k), p.PTTL(ctx, k)
		return nil
	})
	if err == nil || errors.Is(err, redis.Nil) {
		used, _ := count.Int64()
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(max(0, a.cfg.Limit-used), 10))
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(max(0, ttl.Val().Milliseconds()), 10))
	}
	answer(w, n <= a.cfg.Limit, nil)
}

// firstHit opens a window at the first hit: SET NX PX (the window's end) and INCR in one
// MULTI, so no INCR lands on a key without its expiry.
func (a *App) firstHit(ctx context.Context, key string) (bool, error) {
	k := Key(FirstHit, key)
	var incr *redis.IntCmd
	_, err := a.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SetNX(ctx, k, 0, a.cfg.Window)
		incr = p.Incr(ctx, k)
		return nil
	})
	if err != nil {
		return false, err
	}
	return incr.Val() <= a.cfg.Limit, nil
}

// epoch counts in the epoch-aligned window of the application's clock: INCR and PEXPIRE (two
// windows, so the key outlives its window) in one MULTI.
func (a *App) epoch(ctx context.Context, key string) (bool, error) {
	k := Key(Epoch, key, strconv.FormatInt(a.windowIndex(time.Now()), 10))
	var incr *redis.IntCmd
	_, err := a.Redis.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, k)
		p.PExpire(ctx, k, 2*a.cfg.Window)
		return nil
	})
	if err != nil {
		return false, err
	}
	return incr.Val() <= a.cfg.Limit, nil
}

// epochNoTTL is epoch without the PEXPIRE: the same decisions, and a key per window left for ever.
func (a *App) epochNoTTL(ctx context.Context, key string) (bool, error) {
	n, err := a.Redis.Incr(ctx, Key(EpochNoTTL, key, strconv.FormatInt(a.windowIndex(time.Now()), 10))).Result()
	return err == nil && n <= a.cfg.Limit, err
}

// blockThreeScript: a client blocked is refused; otherwise a first-hit window counts it, and
// one over the limit blocks the client for three windows. KEYS: counter, block. ARGV: window
// ms, limit.
var blockThreeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], 1, 'PX', 3 * tonumber(ARGV[1]))
  return 0
end
return 1`)

func (a *App) blockThree(ctx context.Context, key string) (bool, error) {
	n, err := blockThreeScript.Run(ctx, a.Redis, []string{Key(BlockThree, key), Key(BlockThree, key, "block")}, a.cfg.Window.Milliseconds(), a.cfg.Limit).Int64()
	return n == 1, err
}

// slidingLogScript admits when fewer than limit admits fall in the last window, by Redis TIME
// in µs (the script's own clock, so concurrent handlers cannot score out of order). KEYS: the
// log. ARGV: window µs, limit, member, expiry ms.
var slidingLogScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], string.format('%.0f', now), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)

func (a *App) slidingLog(ctx context.Context, key string) (bool, error) {
	n, err := slidingLogScript.Run(ctx, a.Redis, []string{Key(SlidingLog, key)},
		a.cfg.Window.Microseconds(), a.cfg.Limit, a.member(), a.cfg.Window.Milliseconds()+1000).Int64()
	return n == 1, err
}

// bucketScript is a token bucket of burst tokens refilled at rate per µs, on Redis TIME, its
// state written as decimal text (a Lua number given to redis.call keeps only 14 digits).
// KEYS: the bucket. ARGV: burst, rate per µs, expiry ms.
var bucketScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local burst, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens, ts = tonumber(v[1]) or burst, tonumber(v[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
local ok = 0
if tokens >= 1 then tokens, ok = tokens - 1, 1 end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.9f', tokens), 'ts', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return ok`)

func (a *App) bucket(ctx context.Context, key string) (bool, error) {
	rate := float64(a.cfg.Limit) / float64(a.cfg.Window.Microseconds())
	n, err := bucketScript.Run(ctx, a.Redis, []string{Key(Bucket, key)},
		a.cfg.Limit, strconv.FormatFloat(rate, 'g', -1, 64), 2*a.cfg.Window.Milliseconds()+1000).Int64()
	return n == 1, err
}

// member names one admit in a sorted set, apart from every other.
func (a *App) member() string { return strconv.FormatUint(a.seq.Add(1), 10) }
