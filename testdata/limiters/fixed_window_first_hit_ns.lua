-- A fixed window opened by the first call after the last one ended, told the time in
-- nanoseconds, in the calling style of sethvargo/go-redisstore (written here, not copied): KEYS the
-- window's state {remaining, next}; ARGV now (ns), tokens per window, window (ns). Replies {tokens,
-- remaining, next reset (ns), ok}. Each window holds exactly its tokens, but it starts at the first
-- call, not at a multiple of the window, so nothing in the contract says where windows begin: the
-- hammer judges it with its alignment unknown.
--   limitctl hammer --limiter fixed-window --script testdata/limiters/fixed_window_first_hit_ns.lua \
--     --script-keys '{key}' --script-args '{now_ns} {limit} {window_ns}' --script-allowed 'reply[4] == 1'
local now = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local state = redis.call('HMGET', KEYS[1], 'remaining', 'next')
local remaining, next_reset = tonumber(state[1]), tonumber(state[2])
if next_reset == nil or now >= next_reset then
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
