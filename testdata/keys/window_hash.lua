-- A fixed window kept in one hash {start, end, count}, in the calling style of Laravel's
-- Illuminate\Redis\Limiters\DurationLimiter (written for limitctl's tests; no code copied): a
-- request inside [start, end] counts; one after end opens a new window starting now, and the hash
-- lives two windows.
--
-- KEYS  the limiter's name
-- ARGV  now (s, with fraction), now (whole s), decay (s), max locks
-- reply {acquired 0/1, window end (s), remaining}
local now, second = tonumber(ARGV[1]), tonumber(ARGV[2])
local decay, max = tonumber(ARGV[3]), tonumber(ARGV[4])

local window = redis.call('HMGET', KEYS[1], 'start', 'end')
if window[1] and now >= tonumber(window[1]) and now <= tonumber(window[2]) then
  local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
  return {count <= max and 1 or 0, tonumber(window[2]), max - count}
end
redis.call('HSET', KEYS[1], 'start', second, 'end', second + decay, 'count', 1)
redis.call('EXPIRE', KEYS[1], 2 * decay)
return {1, second + decay, max - 1}
