-- TOO STRICT on purpose: a sliding log (the shipped shape) that counts two windows back: it
-- prunes and counts from now - 2 * window, so every admit holds its place twice as long as the
-- window says.
-- Called with the shipped sliding-window contract:
--   limitctl hammer --limiter sliding-window --script testdata/limiters/strict/sliding_log_two_windows.lua
-- KEYS[1] the log  ARGV limit, now_ms, window_ms, member
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local count = redis.call('ZCOUNT', log, '(' .. (now - 2 * window), '+inf')
if count >= limit then
  return {0, count}
end
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - 3 * window)
redis.call('ZADD', log, now, ARGV[4])
redis.call('PEXPIRE', log, 3 * window)
return {1, count + 1}
