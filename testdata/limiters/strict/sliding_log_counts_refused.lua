-- TOO STRICT on purpose: a sliding log in the calling style of peterkhayes/rolling-rate-limiter
-- (its issues #36 and #9; written for limitctl's tests, no code copied) that records every
-- attempt, refused ones too. Under steady demand above the limit the log never holds fewer than
-- limit entries of the last window, so the limiter never frees up.
--   limitctl hammer --limiter sliding-window --script testdata/limiters/strict/sliding_log_counts_refused.lua \
--     --script-args '{now_us} {window_ms} {limit} {member}' --script-allowed 'reply == 0'
-- KEYS[1] the log  ARGV now (µs), window (ms), limit, member
-- reply 0 when allowed, else the number of attempts in the window
local log = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2]) * 1000 -- µs, as now
local limit = tonumber(ARGV[3])

redis.call('ZREMRANGEBYSCORE', log, 0, now - window)
local attempts = redis.call('ZCARD', log)
redis.call('ZADD', log, now, ARGV[4])
redis.call('PEXPIRE', log, math.ceil(2 * window / 1000))
if attempts >= limit then
  return attempts
end
return 0
