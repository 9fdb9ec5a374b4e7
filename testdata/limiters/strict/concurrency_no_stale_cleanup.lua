-- TOO STRICT on purpose: the shipped concurrency semaphore without its stale cleanup (the
-- ZREMRANGEBYSCORE line). A request whose client crashed keeps its member until the whole set
-- expires, stale-after after the last admit; once the limit's worth of members are abandoned
-- no admit refreshes that TTL, but until it runs out every call is refused, also once the
-- oldest abandoned member is more than stale-after old and a correct limiter had reclaimed it.
-- Called with the shipped concurrency contract:
--   limitctl hammer --limiter concurrency --script testdata/limiters/strict/concurrency_no_stale_cleanup.lua
-- KEYS[1] set  ARGV limit, now_ms, stale_after_ms, member
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local stale_after = tonumber(ARGV[3])

local in_flight = redis.call('ZCARD', set)
if in_flight >= limit then
  return {0, in_flight}
end
redis.call('ZADD', set, now, ARGV[4])
redis.call('PEXPIRE', set, stale_after)
return {1, in_flight + 1}
