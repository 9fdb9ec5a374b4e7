-- A fixed-window limiter in the style of popular rate-limit middleware:
-- KEYS[1] counter; ARGV window_s, cost, limit. Returns {count, ttl_ms}.
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
-- The first hit of a window sets the TTL. INCRBY replies with a number and
-- ARGV[2] is a string, so this is always false: the key never expires.
if current == ARGV[2] then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
local limit = tonumber(ARGV[3])
-- tonumber on one side and a raw ARGV on the other: ~= is always true.
if limit ~= ARGV[3] then
  limit = 100
end
-- An ordering comparison of ARGV with a number raises at run time.
if ARGV[3] < 1 then
  return {-1, 0}
end
-- A GET reply is a string (or false); comparing it with a number raises too.
local previous = redis.call('GET', KEYS[2])
if previous and previous > current then
  return {previous, 0}
end
-- A negated count is still a number: -current == -tonumber(ARGV[2]) is fine,
-- and -current == ARGV[2] is always false, reported at current's column.
local refund = -current == -tonumber(ARGV[2]) or -current == ARGV[2]
return {current, redis.call('PTTL', KEYS[1]), refund}
