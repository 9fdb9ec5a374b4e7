-- BUGGY on purpose: fixed_window_first_hit_ns.lua (same flags), but each window admits one more
-- than its tokens. The contract does not align the window, and with the workers' clocks skewed and
-- calls late a window may share its first and last milliseconds with its neighbours, so one too
-- many per window is proven only where no shift of the windows can absorb it. The hammer anchors
-- a window at the call that opened it (no correct limiter's window can open before a call that
-- found it closed), which pins the windows down: make verify-power catches it in 20 of 20 runs,
-- most at the first window. A contract that names the window ({window_index}) is judged per
-- aligned window (buggy/fixed_window_off_by_one.lua).
local now = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local state = redis.call('HMGET', KEYS[1], 'remaining', 'next')
local remaining, next_reset = tonumber(state[1]), tonumber(state[2])
if next_reset == nil or now >= next_reset then
  remaining, next_reset = tokens, now + window
end
local ok = 0
if remaining >= 0 then -- THE BUG: one more than the tokens
  remaining = remaining - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 'remaining', remaining, 'next', string.format('%.0f', next_reset))
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * window / 1e6))
return {tokens, remaining, string.format('%.0f', next_reset), ok}
