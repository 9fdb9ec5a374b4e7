-- BUGGY on purpose (limitctl must catch it): moving_window_list.lua (same flags), but the list
-- lives one window past its last push: a request from a client whose clock is a little behind
-- finds it expired and passes on top of a full window.
-- Not in make verify-power: the list expires only after a full window without an admit, so the
-- default load catches it only when a pause ends within 2 x skew of that (4 of 20 runs of 5s);
-- kept to show why moving_window_list.lua keeps its list two windows.
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
redis.call('EXPIRE', list, math.ceil(expiry)) -- THE BUG: one window
return true
