package corpus

import (
	"github.com/limitctl/limitctl/internal/limiter"
)

// The two-counter estimate (sliding-window-counter): a window's count plus the previous
// window's, weighted by the share of it still inside the sliding window. Every rounding of the
// weighted share is correct (floored as upstash's, rounded as go-chi/httprate's, exact, rounded
// up), windows on the epoch named by the caller or phased by the first hit and kept while the
// state lives, only admits counted; each clock takes the next rounding in turn.

// roundings are the correct ways of deciding on the weighted share, as Lua: ok is 1 to admit,
// count the estimate.
var roundings = []struct{ name, lua string }{
	{"floor", "local count = cur + math.floor(share)\nlocal ok = 0\nif count < limit then ok = 1 end"},
	{"round", "local count = math.floor(cur + share + 0.5)\nlocal ok = 0\nif count + 1 <= limit then ok = 1 end"},
	{"exact", "local count = cur + share\nlocal ok = 0\nif count < limit then ok = 1 end"},
	{"ceil", "local count = cur + math.ceil(share)\nlocal ok = 0\nif count < limit then ok = 1 end"},
}

// rounding is the rounding clock c takes.
func rounding(c clock) (name, lua string) {
	for i, x := range clocks {
		if x.name == c.name {
			r := roundings[i%len(roundings)]
			return r.name, r.lua
		}
	}
	return roundings[0].name, roundings[0].lua
}

func counterLimiter(fam string, c clock, p params, s *script, keys string) Limiter {
	r, _ := rounding(c)
	return replied(Limiter{Name: name(limiter.SlidingWindowCounter, fam, c, p, "rounding="+r), Kind: limiter.SlidingWindowCounter,
		Family: fam, Keys: keys, Args: s.argsTemplate(), Limit: p.limit, Window: p.window}, p, s)
}

// counterHead declares the time on c, the window in its unit, the limit and the window in ms.
func counterHead(s *script, c clock) {
	s.now(c)
	s.add("local win = %s", s.arg(c.window))
	s.add("local limit = %s", s.arg("{limit}"))
	s.add("local win_ms = %s", s.arg("{window_ms}"))
}

// counterEpochInKey: upstash's layout, a counter per window named by the caller's clock
// ({key}:{window_index} and the one before), decided by the same clock's fraction of the window,
// counters living two windows from their first admit.
func counterEpochInKey(c clock, p params) Limiter {
	var s script
	counterHead(&s, c)
	s.add("local cur = tonumber(redis.call('GET', KEYS[1]) or '0')")
	s.add("local prev = tonumber(redis.call('GET', KEYS[2]) or '0')")
	s.add("local share = prev * (win - now %% win) / win")
	_, decide := rounding(c)
	s.add("%s", decide)
	s.add("if ok == 1 and redis.call('INCR', KEYS[1]) == 1 then %s end", expire(p, "KEYS[1]", "2 * win_ms"))
	return counterLimiter("epoch-in-key", c, p, &s, "{key}:{window_index} {key}:{prev_window_index}")
}

// counterGrid: windows phased by the first hit, their counters in one hash by window number, kept
// while the hash lives (two windows past its last admit, or its first call); a call decided by
// its own clock's window and the one before, whichever windows later calls have reached.
func counterGrid(c clock, p params) Limiter {
	var s script
	counterHead(&s, c)
	s.add("local start = tonumber(redis.call('HGET', KEYS[1], 'start'))")
	s.add("if start == nil then")
	s.add("  start = now")
	s.add("  redis.call('HSET', KEYS[1], 'start', num(start))")
	s.add("  %s", expire(p, "KEYS[1]", "2 * win_ms"))
	s.add("end")
	s.add("local t = math.floor((now - start) / win)")
	s.add("local cur = tonumber(redis.call('HGET', KEYS[1], 'c' .. t) or '0')")
	s.add("local prev = tonumber(redis.call('HGET', KEYS[1], 'c' .. (t - 1)) or '0')")
	s.add("local share = prev * (win - (now - start - t * win)) / win")
	_, decide := rounding(c)
	s.add("%s", decide)
	s.add("if ok == 1 then")
	s.add("  redis.call('HINCRBY', KEYS[1], 'c' .. t, 1)")
	// A window's counter is read as the previous one for a window more, and first written no
	// later than its end: dropped three windows on, it has lived two windows at least.
	s.add("  redis.call('HDEL', KEYS[1], 'c' .. (t - 3), 'c' .. (t - 4))")
	s.add("  %s", expire(p, "KEYS[1]", "2 * win_ms"))
	s.add("end")
	return counterLimiter("grid", c, p, &s, "{key}")
}
