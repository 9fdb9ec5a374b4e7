-- A concurrency limit in the calling style of sidekiq-throttled (written for limitctl's tests;
-- no code copied): the in-progress jobs are a sorted set whose scores are deadlines (now plus
-- the lost-job threshold), so a job whose deadline passed is reclaimed; a second key, a hash,
-- counts throttled attempts. It replies 1 when the job is throttled, 0 when it may run.
--
-- KEYS  in-progress sorted set, backlog hash
-- ARGV  job id, limit, lost-job threshold (s), now (s, with fraction)
--
-- limitctl hammer --limiter concurrency --script concurrency_deadlines.lua \
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
  redis.call('EXPIRE', backlog, math.ceil(threshold))
  return 1
end
redis.call('ZADD', in_progress, now + threshold, job)
redis.call('EXPIRE', in_progress, math.ceil(threshold))
return 0
