-- moving_window_list_no_expire: a moving window kept as a list of timestamps, in the calling
-- style of alisaifee/limits (written for limitctl's tests; no code copied), with no EXPIRE: the
-- list stays for ever once traffic stops (a leak, as alisaifee/limits#15 reported of its counters).
--
-- KEYS  the list
-- ARGV  timestamp (s, with fraction), limit, expiry (s), amount
--
-- limitctl hammer --limiter sliding-window --script moving_window_list_no_expire.lua \
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
return true
