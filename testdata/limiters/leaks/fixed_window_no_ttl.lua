-- fixed_window_no_ttl: the shipped fixed_window without its PEXPIRE (a leak: every window's
-- counter stays for ever; the window still resets, since each window has a key of its own).
-- KEYS[1] counter of this window  ARGV[1] limit  ARGV[2] window_ms
-- returns {allowed 0/1, count, ttl_ms}
local counter = KEYS[1]
local limit = tonumber(ARGV[1])

local count = tonumber(redis.call('GET', counter) or '0')
local allowed = 0
if count < limit then
  count = redis.call('INCR', counter)
  allowed = 1
end
return {allowed, count, redis.call('PTTL', counter)}
