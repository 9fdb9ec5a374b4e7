-- A concurrency limit in the calling style of Apache APISIX's limit-conn plugin on Redis
-- (written for limitctl's tests; no code copied): the requests in flight are a sorted set whose
-- scores are deadlines, the caller's now plus the key's TTL, with now in whole seconds (as
-- OpenResty's ngx.time() gives it); a request whose deadline has come is dropped before counting.
-- It replies {1, held} when the request may run and {0, held} when it is refused.
--
-- KEYS  the set
-- ARGV  limit, TTL (s), now (whole seconds), request id
--
-- limitctl hammer --limiter concurrency --script concurrency_deadlines_whole_seconds.lua \
--   --script-keys '{key}' --script-args '{limit} {stale_after_s} {window_index} {member}' \
--   --script-allowed 'reply[1] == 1' --script-release 'ZREM {key} {member}' --window 1s
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local id = ARGV[4]

redis.call('ZREMRANGEBYSCORE', set, 0, now)
local held = redis.call('ZCARD', set)
if held >= limit then
  return {0, held}
end
redis.call('ZADD', set, now + ttl, id)
redis.call('EXPIRE', set, ttl)
return {1, held + 1}
