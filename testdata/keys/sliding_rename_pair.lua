-- A sliding window kept as two counters, the current window {<key>} and the previous one
-- {<key>}/-1, in the calling style of alisaifee/limits' sliding window counter (written for
-- limitctl's tests; no code copied). Times are in milliseconds. The current counter lives two
-- windows; once less than one window of it is left, it becomes the previous counter (RENAME)
-- and a new current counter starts at 0. The previous count weighs by its time left over the
-- window: floor(previous * pttl(previous) / window) + current.
--
-- KEYS  previous counter, current counter
-- ARGV  limit, window (s), amount
-- reply true (1) when the request passed, false (nil) when it was refused
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2]) * 1000
local amount = tonumber(ARGV[3])

local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 and ttl < window then
  redis.call('RENAME', KEYS[2], KEYS[1])
  redis.call('SET', KEYS[2], 0, 'PX', ttl + window)
end
local previous = tonumber(redis.call('GET', KEYS[1])) or 0
local previousTTL = math.max(0, redis.call('PTTL', KEYS[1]))
local current = tonumber(redis.call('GET', KEYS[2])) or 0
if math.floor(previous * previousTTL / window) + current + amount > limit then
  return false
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('INCRBY', KEYS[2], amount)
else
  redis.call('SET', KEYS[2], amount, 'PX', 2 * window)
end
return true
