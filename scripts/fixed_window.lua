-- fixed_window: count one request against the current window's counter.
-- KEYS[1] counter of this window (the caller names the window in the key, e.g. rl:user:42:<window_start_ms>)
-- ARGV[1] limit  ARGV[2] window_ms
-- returns {allowed 0/1, count, ttl_ms}
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])

local count = tonumber(redis.call('GET', counter) or '0')
local allowed = 0
if count < limit then
  count = redis.call('INCR', counter)
  allowed = 1
end
local ttl = redis.call('PTTL', counter)
if ttl < 0 and count > 0 then
  -- A new counter, or one that lost its TTL. It lives two windows, not one: a request that
  -- reaches Redis just after its window ended must still find the window's count.
  redis.call('PEXPIRE', counter, 2 * window)
  ttl = 2 * window
end
return {allowed, count, ttl}
