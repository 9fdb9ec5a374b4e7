-- fixed_window_expire_on_second_hit: a window counter whose expiry is set on the second hit
-- (count == 2) instead of the first, so a window that saw one request keeps its counter for
-- ever (a leak). Under load every window is hit many times and gets its TTL; a key hit once,
-- as a user seen once a day is, never does.
-- KEYS[1] counter of this window  ARGV[1] limit  ARGV[2] window_ms
-- returns {allowed 0/1, count, ttl_ms}
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])

local count = tonumber(redis.call('GET', counter) or '0')
local allowed = 0
if count < limit then
  count = redis.call('INCR', counter)
  allowed = 1
  if count == 2 then
    redis.call('PEXPIRE', counter, 2 * window)
  end
end
return {allowed, count, redis.call('PTTL', counter)}
