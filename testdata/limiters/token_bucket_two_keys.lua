-- A token bucket kept in two plain keys, in the calling style of Spring Cloud Gateway's
-- RedisRateLimiter (after Stripe's; written here, not copied): KEYS the tokens left and the time
-- they were counted; ARGV replenish rate (tokens per second), burst capacity, now in seconds
-- (the gateway passes "" so the script reads the server's TIME, to the microsecond), tokens
-- requested. Replies {1 or 0 (allowed), tokens left}.
--   limitctl hammer --limiter token-bucket --script testdata/limiters/token_bucket_two_keys.lua \
--     --script-keys '{key}.tokens {key}.timestamp' --script-args '{rate_per_s} {burst} "" {cost}'
redis.replicate_commands()

local tokens_key, stamp_key = KEYS[1], KEYS[2]
local per_second = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local asked = tonumber(ARGV[4])

local now = tonumber(ARGV[3])
if now == nil then
  local clock = redis.call('TIME')
  now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
end

-- Both keys outlive a full refill twice over; past that the bucket is full anyway.
local keep_s = math.max(1, math.ceil(2 * capacity / per_second))

local left = tonumber(redis.call('GET', tokens_key)) or capacity
local counted_at = tonumber(redis.call('GET', stamp_key)) or 0
-- Time never runs backwards here: a request whose now is older refills nothing.
local refill = math.max(0, now - counted_at) * per_second
local available = math.min(capacity, left + refill)

local allowed = 0
if available >= asked then
  available = available - asked
  allowed = 1
end
redis.call('SET', tokens_key, available, 'EX', keep_s)
redis.call('SET', stamp_key, math.max(now, counted_at), 'EX', keep_s)
return {allowed, math.floor(available)}
