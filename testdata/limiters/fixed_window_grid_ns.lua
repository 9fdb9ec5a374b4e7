-- Tokens per interval on a grid phased by the first call, told the time in nanoseconds, in the
-- calling style of sethvargo/go-redisstore (written here, not copied): KEYS the state hash
-- {start, tick, tokens, max}; ARGV now (ns), tokens per interval, interval (ns). The first call
-- ever stores start = now; every call counts ticks from it, tick = floor((now - start) /
-- interval), and a tick later than the stored one refills the tokens to the maximum. The TTL is a
-- few intervals in whole seconds, renewed by every admit, so the grid is kept while the key lives.
-- Replies {tokens, remaining, next tick (ns), ok}. Each interval admits at most its tokens, but
-- after an idle spell the first call lands anywhere inside an interval that began before it:
-- correct, though no window starts at the call that opened it.
--   limitctl hammer --limiter fixed-window --script testdata/limiters/fixed_window_grid_ns.lua \
--     --script-keys '{key}' --script-args '{now_us}000 {limit} {window_ms}000000' \
--     --script-allowed 'reply[4] == 1'
local now = tonumber(ARGV[1])
local max_tokens = tonumber(ARGV[2])
local interval = tonumber(ARGV[3])
local ttl = 3 * math.max(1, math.floor(interval / 1e9))

local state = redis.call('HMGET', KEYS[1], 'start', 'tick', 'tokens')
local start, last_tick, tokens = tonumber(state[1]), tonumber(state[2]), tonumber(state[3])
if start == nil then
  start, last_tick, tokens = now, 0, max_tokens
  redis.call('HSET', KEYS[1], 'start', string.format('%.0f', start), 'tick', 0, 'tokens', tokens)
  redis.call('EXPIRE', KEYS[1], ttl)
end

local tick = math.max(0, math.floor((now - start) / interval))
if tick > last_tick then
  last_tick, tokens = tick, max_tokens
  redis.call('HSET', KEYS[1], 'tick', last_tick, 'tokens', tokens)
end
local next_tick = string.format('%.0f', start + (last_tick + 1) * interval)

if tokens > 0 then
  tokens = tokens - 1
  redis.call('HSET', KEYS[1], 'tokens', tokens)
  redis.call('EXPIRE', KEYS[1], ttl)
  return {max_tokens, tokens, next_tick, 1}
end
return {max_tokens, tokens, next_tick, 0}
