-- TOO STRICT on purpose: a concurrency semaphore whose release never removes the member.
-- The acquire stores the request id with the time appended (as some libraries do to keep
-- members unique), but the caller releases the id it passed, so ZREM removes nothing and every
-- slot leaks until stale-after reclaims it: after limit requests, every one is refused.
-- Called with the shipped concurrency contract:
--   limitctl hammer --limiter concurrency --script testdata/limiters/strict/concurrency_release_leaks.lua
-- KEYS[1] set  ARGV limit, now_ms, stale_after_ms, member
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local stale_after = tonumber(ARGV[3])

redis.call('ZREMRANGEBYSCORE', set, '-inf', now - stale_after)
local in_flight = redis.call('ZCARD', set)
if in_flight >= limit then
  return {0, in_flight}
end
redis.call('ZADD', set, now, ARGV[4] .. '@' .. now)
redis.call('PEXPIRE', set, stale_after)
return {1, in_flight + 1}
