-- TOO STRICT on purpose: a meter that drains at the rate and is charged for every attempt,
-- refused ones included (the pattern behind tj/node-ratelimiter#45 and
-- envoyproxy/ratelimit#185: a counter that grows with blocked calls). The level carries over,
-- never reset per window, so steady demand above the rate keeps it full for ever.
-- Called with the shipped token-bucket contract:
--   limitctl hammer --limiter token-bucket --script testdata/limiters/strict/token_bucket_counts_refused.lua
-- KEYS[1] meter hash {level, ts}  ARGV rate_per_s, burst, now_ms, cost
local meter = KEYS[1]
local rate = tonumber(ARGV[1]) / 1000 -- drained per ms
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local state = redis.call('HMGET', meter, 'level', 'ts')
local level, ts = tonumber(state[1]) or 0, tonumber(state[2]) or now
if now > ts then
  level = math.max(0, level - (now - ts) * rate)
  ts = now
end
level = level + cost -- the bug: charged before it is known whether the request passes
redis.call('HSET', meter, 'level', level, 'ts', ts)
redis.call('PEXPIRE', meter, math.ceil(level / rate) + 1000)
if level > burst then
  return {0, 0, math.ceil((level - burst) / rate)}
end
return {1, math.floor(burst - level), 0}
