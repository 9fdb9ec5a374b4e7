-- sliding_window_no_ttl: the shipped sliding_window without its PEXPIRE (a leak: the log stays for
-- ever once traffic stops).
-- KEYS[1] log of admitted request ids, scored by request time (ms)
-- ARGV[1] limit  ARGV[2] now_ms  ARGV[3] window_ms  ARGV[4] member (unique request id)
-- returns {allowed 0/1, count}
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local member = ARGV[4]

-- Count every member newer than now - window, including ones from a racing client
-- whose clock is a little ahead.
local count = redis.call('ZCOUNT', log, '(' .. (now - window), '+inf')
if count >= limit then
  -- A rejection writes nothing: the count needs no pruning, and the log grows only on admits.
  return {0, count}
end
-- Prune two windows back, not one: a request whose now is slightly older than one
-- already executed (clients race on the way to Redis) must still see every member
-- of its own window.
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - 2 * window)
redis.call('ZADD', log, now, member)
return {1, count + 1}
