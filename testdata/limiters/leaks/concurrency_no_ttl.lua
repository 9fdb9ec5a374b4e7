-- concurrency_no_ttl: the shipped concurrency_acquire with its PEXPIRE line removed (a leak: the set
-- of a crashed client's requests never goes away once traffic stops; getsentry/sentry#122038).
-- KEYS[1] set of in-flight request ids, scored by start time (ms)
-- ARGV[1] limit  ARGV[2] now_ms  ARGV[3] stale_after_ms  ARGV[4] member (unique request id)
-- returns {allowed 0/1, in_flight_after}
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local stale_after = tonumber(ARGV[3])
local member = ARGV[4]

-- Reclaim slots whose release never came.
redis.call('ZREMRANGEBYSCORE', set, '-inf', now - stale_after)
local in_flight = redis.call('ZCARD', set)
if in_flight >= limit then
  -- A rejection adds nothing, so it refreshes no TTL: the one the newest member set outlives
  -- every member left.
  return {0, in_flight}
end
redis.call('ZADD', set, now, member)
return {1, in_flight + 1}
