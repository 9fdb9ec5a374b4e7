-- sliding_window: admit at most limit requests in any window of window_ms (a log on a sorted set).
-- KEYS[1] log of admitted request ids, scored by request time (ms)
-- ARGV[1] limit  ARGV[2] now_ms  ARGV[3] window_ms  ARGV[4] member (unique request id)
-- returns {allowed 0/1, count}
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local member = ARGV[4]

-- Prune two windows back, not one: a request whose now is slightly older than one
-- already executed (clients race on the way to Redis) must still see every member
-- of its own window.
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - 2 * window)
-- Count every member newer than now - window, including ones from a racing client
-- whose clock is a little ahead.
local count = redis.call('ZCOUNT', log, '(' .. (now - window), '+inf')
local allowed = 0
if count < limit then
  redis.call('ZADD', log, now, member)
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', log, 2 * window)
return {allowed, count}
