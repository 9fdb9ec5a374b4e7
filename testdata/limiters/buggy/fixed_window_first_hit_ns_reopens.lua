-- BUGGY on purpose (limitctl must catch it): fixed_window_first_hit_ns.lua (same flags), but a
-- caller whose now is before the open window's start also opens a new window ("its clock says the
-- window has not begun"): callers whose clocks disagree keep reopening it, each time with every
-- token back.
local now = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local state = redis.call('HMGET', KEYS[1], 'remaining', 'next')
local remaining, next_reset = tonumber(state[1]), tonumber(state[2])
if next_reset == nil or now >= next_reset or now < next_reset - window then -- THE BUG: the last test
  remaining, next_reset = tokens, now + window
end
local ok = 0
if remaining > 0 then
  remaining = remaining - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 'remaining', remaining, 'next', string.format('%.0f', next_reset))
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * window / 1e6))
return {tokens, remaining, string.format('%.0f', next_reset), ok}
