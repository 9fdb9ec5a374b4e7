-- A moving window kept as a list of timestamps, in the calling style of alisaifee/limits
-- (written for limitctl's tests; no code copied): the request may pass when the entry that
-- would become the limit-th newest is older than the window; the script then pushes the
-- request's timestamp (amount times), trims the list to the limit and sets its expiry.
-- Replies true (1) or false (nil).
--
-- One difference on purpose: the list lives two windows past its last push, not one. With one, a
-- request from a client whose clock is a little behind can reach Redis after the list expired,
-- find it empty and pass on top of a full window (the hammer's default skew shows it at once).
--
-- KEYS  the list
-- ARGV  timestamp (s, with fraction), limit, expiry (s), amount
--
-- limitctl hammer --limiter sliding-window --script moving_window_list.lua \
--   --script-args '{now_s} {limit} {window_s} {cost}' --script-allowed 'reply ~= false'
local list = KEYS[1]
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local expiry = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])

if amount > limit then
  return false
end
local entry = redis.call('LINDEX', list, limit - amount)
if entry and tonumber(entry) > now - expiry then
  return false
end
for _ = 1, amount do
  redis.call('LPUSH', list, ARGV[1])
end
redis.call('LTRIM', list, 0, limit - 1)
redis.call('EXPIRE', list, math.ceil(2 * expiry))
return true
