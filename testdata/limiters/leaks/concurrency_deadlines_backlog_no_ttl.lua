-- concurrency_deadlines_backlog_no_ttl: a concurrency limit in the calling style of
-- sidekiq-throttled (written for limitctl's tests; no code copied) whose backlog hash, written
-- only when a job is throttled, is given no expiry: a key written only on refusals stays for ever
-- (a leak). The in-progress set is right: deadline scores, reclaimed once passed, with a TTL.
--
-- KEYS  in-progress sorted set, backlog hash
-- ARGV  job id, limit, lost-job threshold (s), now (s, with fraction)
--
-- limitctl hammer --limiter concurrency --script concurrency_deadlines_backlog_no_ttl.lua \
--   --script-keys '{key}:in_progress {key}:backlog' \
--   --script-args '{member} {limit} {stale_after_s} {now_s}' \
--   --script-allowed 'reply == 0' --script-release 'ZREM {key}:in_progress {member}'
local in_progress, backlog = KEYS[1], KEYS[2]
local job = ARGV[1]
local limit = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local now = tonumber(ARGV[4])

redis.call('ZREMRANGEBYSCORE', in_progress, '-inf', now)
if redis.call('ZCARD', in_progress) >= limit then
  redis.call('HINCRBY', backlog, 'throttled', 1)
  return 1
end
redis.call('ZADD', in_progress, now + threshold, job)
redis.call('EXPIRE', in_progress, math.ceil(threshold))
return 0
