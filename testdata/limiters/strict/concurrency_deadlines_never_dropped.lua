-- TOO STRICT on purpose: a concurrency limit in the calling style of sidekiq-throttled (written
-- for limitctl's tests; no code copied) whose in-progress jobs are scored by their deadline,
-- now plus the lost-job threshold, but whose expired deadlines are never dropped: a job whose
-- worker crashed holds its place until the whole set expires, a threshold after the last job
-- started, and is counted long after its deadline passed. It replies 1 when throttled.
--
-- KEYS  in-progress sorted set, backlog hash
-- ARGV  job id, limit, lost-job threshold (s), now (s, with fraction)
--
-- limitctl hammer --limiter concurrency --script testdata/limiters/strict/concurrency_deadlines_never_dropped.lua \
--   --script-keys '{key}:in_progress {key}:backlog' \
--   --script-args '{member} {limit} {stale_after_s} {now_s}' \
--   --script-allowed 'reply == 0' --script-release 'ZREM {key}:in_progress {member}'
local in_progress, backlog = KEYS[1], KEYS[2]
local job = ARGV[1]
local limit = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local now = tonumber(ARGV[4])

if redis.call('ZCARD', in_progress) >= limit then
  redis.call('HINCRBY', backlog, 'throttled', 1)
  redis.call('EXPIRE', backlog, math.ceil(threshold))
  return 1
end
redis.call('ZADD', in_progress, now + threshold, job)
redis.call('EXPIRE', in_progress, math.ceil(threshold))
return 0
