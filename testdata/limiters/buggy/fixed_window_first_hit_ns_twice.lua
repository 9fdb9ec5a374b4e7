-- fixed_window_first_hit_ns_twice: fixed_window_first_hit_ns.lua (sethvargo/go-redisstore style)
-- that opens each window with twice its tokens: it admits twice its limit per window. Under a
-- skew as wide as the window the evidence for a window of unknown alignment sees nothing, so
-- the verdict must be `not judged`, never `exact`.
--   limitctl hammer --limiter fixed-window --script testdata/limiters/buggy/fixed_window_first_hit_ns_twice.lua \
--     --script-keys '{key}' --script-args '{now_ns} {limit} {window_ns}' --script-allowed 'reply[4] == 1'
local now = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local state = redis.call('HMGET', KEYS[1], 'remaining', 'next')
local remaining, next_reset = tonumber(state[1]), tonumber(state[2])
if next_reset == nil or now >= next_reset then
  remaining, next_reset = 2 * tokens, now + window
end
local ok = 0
if remaining > 0 then
  remaining = remaining - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 'remaining', remaining, 'next', string.format('%.0f', next_reset))
redis.call('PEXPIRE', KEYS[1], math.ceil(2 * window / 1e6))
return {tokens, remaining, string.format('%.0f', next_reset), ok}
