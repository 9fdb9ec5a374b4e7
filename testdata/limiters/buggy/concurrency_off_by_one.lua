-- BUGGY on purpose (limitctl must catch it): the shipped concurrency contract, but the slot is
-- taken while in_flight <= limit, so limit + 1 requests run at once.
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local stale_after = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', set, '-inf', now - stale_after)
local in_flight = redis.call('ZCARD', set)
if in_flight <= limit then -- THE BUG: <= instead of <
  redis.call('ZADD', set, now, ARGV[4])
  redis.call('PEXPIRE', set, stale_after)
  return {1, in_flight + 1}
end
return {0, in_flight}
