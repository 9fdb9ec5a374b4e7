-- Fixed-window counter: the first INCR of a window sets its TTL.
-- KEYS[1] counter; ARGV limit, window_ms.
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])

local count = redis.call('INCR', counter)
if count == 1 then
  redis.call('PEXPIRE', counter, window_ms)
end
local ttl_ms = redis.call('PTTL', counter)
if count > limit then
  return {0, count, ttl_ms}
end
return {1, count, ttl_ms}
