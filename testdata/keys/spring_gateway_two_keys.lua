-- A token bucket kept in two plain strings, in the calling style of Spring Cloud Gateway's
-- RedisRateLimiter before it moved to one hash (written for limitctl's tests; no code copied):
-- keys request_rate_limiter.{id}.tokens and request_rate_limiter.{id}.timestamp, the time in whole
-- seconds since the Unix epoch, both written with SETEX for twice the time the bucket takes to fill.
--
-- KEYS  tokens key, timestamp key
-- ARGV  replenish rate (tokens/s), burst capacity, now (s), requested tokens
-- reply {allowed 0/1, tokens left}
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])
local ttl = math.floor(2 * capacity / rate)

local tokens = tonumber(redis.call('GET', KEYS[1])) or capacity
local last = tonumber(redis.call('GET', KEYS[2])) or 0
tokens = math.min(capacity, tokens + math.max(0, now - last) * rate)
local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('SETEX', KEYS[1], ttl, tokens)
redis.call('SETEX', KEYS[2], ttl, now)
return {allowed, tokens}
