-- BUGGY on purpose (limitctl must catch it): a leaky bucket (the shipped token-bucket contract:
-- it drains at rate_per_s and holds at most burst) that drains by the time between two calls
-- taken as abs(now - last) and stores last = now: a caller whose clock is behind drains the
-- bucket by the gap, and the next caller drains it by the same gap again.
local bucket = KEYS[1]
local rate = tonumber(ARGV[1]) / 1000 -- drained per ms
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local state = redis.call('HMGET', bucket, 'level', 'last')
local level, last = tonumber(state[1]) or 0, tonumber(state[2]) or now
level = math.max(0, level - math.abs(now - last) * rate) -- THE BUG: abs, and last = now below
local allowed = 0
if level + cost <= burst then
  level = level + cost
  allowed = 1
end
redis.call('HSET', bucket, 'level', level, 'last', now)
redis.call('PEXPIRE', bucket, math.ceil(burst / rate) + 1000)
return {allowed, math.floor(burst - level), allowed == 1 and 0 or math.ceil((level + cost - burst) / rate)}
