-- Concurrency limiter acquire, as the spec describes it: reclaim stale
-- members, count, admit below the limit, and keep the set's TTL.
-- KEYS[1] in-flight set; ARGV limit, now_ms, stale_after_ms, member.
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local stale_after = tonumber(ARGV[3])
local member = ARGV[4]

redis.call('ZREMRANGEBYSCORE', set, '-inf', now - stale_after)
local in_flight = redis.call('ZCARD', set)
local allowed = 0
if in_flight < limit then
  redis.call('ZADD', set, now, member)
  in_flight = in_flight + 1
  allowed = 1
end
redis.call('PEXPIRE', set, stale_after)
return {allowed, in_flight}
