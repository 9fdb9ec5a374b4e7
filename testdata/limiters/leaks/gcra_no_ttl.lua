-- gcra_no_ttl: a GCRA token bucket in the calling style of go-redis/redis_rate (written for
-- limitctl's tests; no code copied) that stores its theoretical arrival time with a plain SET and
-- no EX: the bucket's key never expires once traffic stops (a leak). It reads TIME itself.
--
-- KEYS[1]  the bucket
-- ARGV     burst, rate (requests per period), period in seconds, cost
--
-- limitctl hammer --limiter token-bucket --script gcra_no_ttl.lua \
--   --script-args '{burst} {limit} {window_s} {cost}' --script-allowed 'reply[1] > 0'
redis.replicate_commands()

local bucket = KEYS[1]
local burst = tonumber(ARGV[1])
local per_period = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local clock = redis.call('TIME')
local now = (tonumber(clock[1]) - 1483228800) + tonumber(clock[2]) / 1e6

local spacing = period / per_period -- seconds between two requests at the steady rate
local stored = redis.call('GET', bucket)
local tat = now
if stored then
  tat = math.max(tonumber(stored), now)
end

local next_tat = tat + spacing * cost
local earliest = next_tat - spacing * burst
if now < earliest then
  return {0, 0, tostring(earliest - now), tostring(tat - now)}
end

local reset_after = next_tat - now
redis.call('SET', bucket, string.format('%.6f', next_tat))
return {cost, math.floor((now - earliest) / spacing), '-1', tostring(reset_after)}
