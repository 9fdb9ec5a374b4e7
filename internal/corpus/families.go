package corpus

import (
	"fmt"

	"github.com/limitctl/limitctl/internal/limiter"
)

// families are the corpus's ways of being correct, per kind.
var families = []family{
	// Fixed windows, their alignment unknown to the contract unless it names the window.
	{kind: limiter.FixedWindow, name: "epoch-in-state", build: fixedEpochInState},
	{kind: limiter.FixedWindow, name: "epoch-in-key", onlyNoTime: true, build: fixedEpochInKey},
	{kind: limiter.FixedWindow, name: "grid", build: fixedGrid},
	{kind: limiter.FixedWindow, name: "first-hit", build: fixedFirstHit},
	{kind: limiter.FixedWindow, name: "first-hit-by-expiry", onlyNoTime: true, build: fixedFirstHitByExpiry},
	{kind: limiter.FixedWindow, name: "rounded-start", wholeSeconds: true, build: fixedRoundedStart},
	// Sliding windows: a log of admits, in a sorted set or a list.
	{kind: limiter.SlidingWindow, name: "log", build: slidingLog},
	{kind: limiter.SlidingWindow, name: "list", maxWindow: 5 * limiterSecond, build: slidingList},
	// Token buckets: continuous refill, GCRA. (A refill in steps, upstash's, is no bucket of
	// rate per second: a step that lands after the burst was spent hands out the whole step at
	// once, up to one step more than burst + rate*T in an interval T, which the evidence rightly
	// proves.)
	{kind: limiter.TokenBucket, name: "continuous", build: bucketContinuous},
	{kind: limiter.TokenBucket, name: "gcra", build: bucketGCRA},
	// Concurrency: start times, or deadlines, in a sorted set.
	{kind: limiter.Concurrency, name: "starts", maxWindow: 5 * limiterSecond, build: concurrencyStarts},
	{kind: limiter.Concurrency, name: "deadlines", maxWindow: 5 * limiterSecond, build: concurrencyDeadlines},
	// Two-counter estimates: a counter per window named by the caller's clock, or a grid phased by
	// the first hit (sliding_counter.go).
	{kind: limiter.SlidingWindowCounter, name: "epoch-in-key", argTime: true, build: counterEpochInKey},
	{kind: limiter.SlidingWindowCounter, name: "grid", build: counterGrid},
}

const limiterSecond = 1_000_000_000 // a time.Duration second, untyped for the table above

// decide is the Lua that admits one more while count < limit (or, countsRefused, raises count on
// every call and admits while it stays within the limit), setting ok to 1 or 0.
func decide(p params) string {
	if p.countsRefused {
		return "count = count + 1\nlocal ok = 0\nif count <= limit then ok = 1 end"
	}
	return "local ok = 0\nif count < limit then\n  count = count + 1\n  ok = 1\nend"
}

// reply is the Lua that returns the decision ok with count, in the shape p draws, and the
// --script-allowed expression that reads it.
func reply(p params) (lua, allowed string) {
	switch p.reply {
	case 1:
		return "if ok == 1 then return 1 end\nreturn false", "reply ~= false"
	case 2:
		return "if ok == 1 then return {limit, limit - math.min(count, limit)} end\nreturn {limit, -1}", "reply[2] >= 0"
	}
	return "return {ok, count}", "reply[1] == 1"
}

func fixedLimiter(fam string, c clock, p params, s *script, keys, start string) Limiter {
	l := Limiter{Name: name(limiter.FixedWindow, fam, c, p, fmt.Sprintf("refused-counted=%v", p.countsRefused)),
		Kind: limiter.FixedWindow, Family: fam, Keys: keys, Args: s.argsTemplate(), Limit: p.limit, Window: p.window, WindowStart: start}
	return replied(l, p, s)
}

// replied is l with its script, which ends in the reply of the shape p draws.
func replied(l Limiter, p params, s *script) Limiter {
	var ret string
	ret, l.Allowed = reply(p)
	s.lines = append(s.lines, ret)
	l.Source = s.source(l.Name)
	return l
}

// fixedEpochInState: the window is floor(now / window), kept in the key's state; a call whose
// window is earlier than the kept one counts in the kept one (a late caller).
func fixedEpochInState(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local index = math.floor(now / win)")
	s.add("local state = redis.call('HMGET', KEYS[1], 'index', 'count')")
	s.add("local kept, count = tonumber(state[1]), tonumber(state[2]) or 0")
	s.add("if kept == nil or index > kept then kept, count = index, 0 end")
	s.add("%s", decide(p))
	s.add("redis.call('HSET', KEYS[1], 'index', num(kept), 'count', count)")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	return fixedLimiter("epoch-in-state", c, p, &s, "{key}", "")
}

// fixedEpochInKey: the contract names the window ({window_index} in the key), as the shipped
// script's caller does: an epoch-aligned counter per window.
func fixedEpochInKey(c clock, p params) Limiter {
	var s script
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local count = tonumber(redis.call('GET', KEYS[1]) or '0')")
	s.add("%s", decide(p))
	s.add("redis.call('SET', KEYS[1], count)")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	return fixedLimiter("epoch-in-key", c, p, &s, "{key}:{window_index}", "")
}

// fixedGrid: ticks counted from the first call's time, kept while the key lives (its TTL of three
// windows renewed by every admit), tokens back to the limit when the tick moves on.
func fixedGrid(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local state = redis.call('HMGET', KEYS[1], 'start', 'tick', 'count')")
	s.add("local start, tick, count = tonumber(state[1]), tonumber(state[2]) or 0, tonumber(state[3]) or 0")
	s.add("if start == nil then start = now end")
	s.add("local t = math.max(0, math.floor((now - start) / win))")
	s.add("if t > tick then tick, count = t, 0 end")
	s.add("%s", decide(p))
	s.add("redis.call('HSET', KEYS[1], 'start', num(start), 'tick', tick, 'count', count)")
	s.add("if ok == 1 then %s end", expire(p, "KEYS[1]", "3 * win_ms"))
	s.add("if redis.call('PTTL', KEYS[1]) < 0 then %s end", expire(p, "KEYS[1]", "3 * win_ms"))
	return fixedLimiter("grid", c, p, &s, "{key}", "")
}

// fixedFirstHit: a window opened by the first call at or after the last one's end, its start
// kept in the state (the key lives two windows past the last call).
func fixedFirstHit(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local state = redis.call('HMGET', KEYS[1], 'start', 'count')")
	s.add("local start, count = tonumber(state[1]), tonumber(state[2]) or 0")
	s.add("if start == nil or now >= start + win then start, count = now, 0 end")
	s.add("%s", decide(p))
	s.add("redis.call('HSET', KEYS[1], 'start', num(start), 'count', count)")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	return fixedLimiter("first-hit", c, p, &s, "{key}", "")
}

// fixedFirstHitByExpiry: SET key 0 PX window NX opens a window when none is open, INCR counts
// (rate-limiter-flexible's way): told no time, the server's clock (the key's expiry) decides.
func fixedFirstHitByExpiry(c clock, p params) Limiter {
	var s script
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	if p.ttlSeconds && p.window%limiterSecond == 0 {
		s.add("redis.call('SET', KEYS[1], 0, 'EX', win_ms / 1000, 'NX')")
	} else {
		p.ttlSeconds = false
		s.add("redis.call('SET', KEYS[1], 0, 'PX', win_ms, 'NX')")
	}
	if p.countsRefused {
		s.add("local count = redis.call('INCR', KEYS[1])\nlocal ok = 0\nif count <= limit then ok = 1 end")
	} else {
		s.add("local count = tonumber(redis.call('GET', KEYS[1]))\nlocal ok = 0\nif count < limit then\n  count = redis.call('INCR', KEYS[1])\n  ok = 1\nend")
	}
	return fixedLimiter("first-hit-by-expiry", c, p, &s, "{key}", "")
}

// fixedRoundedStart: a window opened by a call at or after the last one's end, its start rounded
// down to a whole second (windows of whole seconds), as a limiter on whole-second times does.
func fixedRoundedStart(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local second = %s", c.second)
	s.add("local state = redis.call('HMGET', KEYS[1], 'start', 'count')")
	s.add("local start, count = tonumber(state[1]), tonumber(state[2]) or 0")
	s.add("if start == nil or now >= start + win then start, count = math.floor(now / second) * second, 0 end")
	s.add("%s", decide(p))
	s.add("redis.call('HSET', KEYS[1], 'start', num(start), 'count', count)")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	return fixedLimiter("rounded-start", c, p, &s, "{key}", "")
}

func otherLimiter(kind limiter.Kind, fam string, c clock, p params, s *script, ret, allowed string) Limiter {
	s.lines = append(s.lines, ret)
	l := Limiter{Name: name(kind, fam, c, p), Kind: kind, Family: fam, Keys: "{key}", Args: s.argsTemplate(),
		Allowed: allowed, Limit: p.limit, Window: p.window}
	l.Source = s.source(l.Name)
	return l
}

// slidingLog: the admits in a sorted set scored by their time, counted after the call's own now
// less a window, pruned only two windows back: exact for calls that reach Redis out of order
// within a window. (Pruned at exactly now - window, a call whose now is older than one that already
// ran finds members of its own window gone: buggy/sliding_window_prune_exact.lua, a bug the
// evidence proves.)
func slidingLog(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local member = %s", s.rawArg("{member}"))
	s.add("local count = redis.call('ZCOUNT', KEYS[1], '(' .. num(now - win), '+inf')")
	s.add("local ok = 0")
	s.add("if count < limit then\n  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', num(now - 2 * win))\n  redis.call('ZADD', KEYS[1], num(now), member)\n  count = count + 1\n  ok = 1\nend")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	ret, allowed := reply(p)
	return otherLimiter(limiter.SlidingWindow, "log", c, p, &s, ret, allowed)
}

// slidingList: the last limit admits' times in a list, newest first (a moving window): room when
// the limit-th is a window old or more.
func slidingList(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
	s.add("local oldest = redis.call('LINDEX', KEYS[1], limit - 1)")
	s.add("local count = redis.call('LLEN', KEYS[1])")
	s.add("local ok = 0")
	s.add("if not oldest or tonumber(oldest) <= now - win then\n  redis.call('LPUSH', KEYS[1], num(now))\n  redis.call('LTRIM', KEYS[1], 0, limit - 1)\n  ok = 1\nend")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	ret, allowed := reply(p)
	return otherLimiter(limiter.SlidingWindow, "list", c, p, &s, ret, allowed)
}

// bucketHead reads the bucket's numbers: burst (the limit), the window it refills in, and the
// TTL's base.
func bucketHead(s *script, c clock) {
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{burst}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
}

// bucketContinuous: tokens refilled at limit per window, continuously, capped at the burst; the
// time it last refilled never goes back.
func bucketContinuous(c clock, p params) Limiter {
	var s script
	bucketHead(&s, c)
	s.add("local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')")
	s.add("local tokens, at = tonumber(state[1]), tonumber(state[2])")
	s.add("if tokens == nil or at == nil then tokens, at = limit, now end")
	s.add("tokens = math.min(limit, tokens + math.max(0, now - at) * limit / win)")
	s.add("at = math.max(at, now)")
	s.add("local ok, count = 0, 0")
	s.add("if tokens >= 1 then\n  tokens = tokens - 1\n  ok = 1\nend")
	s.add("count = limit - math.floor(tokens)")
	s.add("redis.call('HSET', KEYS[1], 'tokens', num(tokens), 'at', num(at))")
	s.add("%s", expire(p, "KEYS[1]", "2 * win_ms"))
	ret, allowed := reply(p)
	return otherLimiter(limiter.TokenBucket, "continuous", c, p, &s, ret, allowed)
}

// bucketGCRA: a theoretical arrival time, one emission interval (window / limit) a token, a
// burst of limit.
func bucketGCRA(c clock, p params) Limiter {
	var s script
	bucketHead(&s, c)
	s.add("local interval = win / limit")
	s.add("local tat = math.max(tonumber(redis.call('GET', KEYS[1])) or now, now)")
	s.add("local ok, count = 0, math.ceil((tat - now) / interval - 1e-9)")
	s.add("if tat + interval - now <= win * (1 + 1e-12) then\n  tat = tat + interval\n  count = count + 1\n  ok = 1\n  redis.call('SET', KEYS[1], num(tat))\n  %s\nend",
		expire(p, "KEYS[1]", "2 * win_ms"))
	ret, allowed := reply(p)
	return otherLimiter(limiter.TokenBucket, "gcra", c, p, &s, ret, allowed)
}

func concurrencyLimiter(fam string, c clock, p params, s *script) Limiter {
	l := otherLimiter(limiter.Concurrency, fam, c, p, s, "", "")
	l.Source = l.Source[:len(l.Source)-1] // no empty return line
	var ret string
	ret, l.Allowed = reply(p)
	l.Source += ret + "\n"
	l.Release = "ZREM {key} {member}"
	return l
}

// concurrencyStarts: in-flight requests scored by when they started, those older than the stale
// time reclaimed before counting.
func concurrencyStarts(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local stale = %s", s.arg(c.stale))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local stale_ms = %s", s.arg("{stale_after_ms}"))
	s.add("local member = %s", s.rawArg("{member}"))
	s.add("redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', num(now - stale))")
	s.add("local count = redis.call('ZCARD', KEYS[1])")
	s.add("local ok = 0")
	s.add("if count < limit then\n  redis.call('ZADD', KEYS[1], num(now), member)\n  count = count + 1\n  ok = 1\nend")
	s.add("%s", expire(p, "KEYS[1]", "2 * stale_ms"))
	return concurrencyLimiter("starts", c, p, &s)
}

// concurrencyDeadlines: in-flight requests scored by when they go stale (a deadline), those whose
// deadline passed reclaimed before counting.
func concurrencyDeadlines(c clock, p params) Limiter {
	var s script
	s.now(c)
	s.add("local stale = %s", s.arg(c.stale))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local stale_ms = %s", s.arg("{stale_after_ms}"))
	s.add("local member = %s", s.rawArg("{member}"))
	s.add("redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', num(now))")
	s.add("local count = redis.call('ZCARD', KEYS[1])")
	s.add("local ok = 0")
	s.add("if count < limit then\n  redis.call('ZADD', KEYS[1], num(now + stale), member)\n  count = count + 1\n  ok = 1\nend")
	s.add("%s", expire(p, "KEYS[1]", "2 * stale_ms"))
	return concurrencyLimiter("deadlines", c, p, &s)
}
