-- TOO STRICT on purpose: a counter opened by the first hit, in the calling style of
-- rate-limiter-flexible (reply {consumed, pttl}, the caller decides), whose window every attempt
-- pushes back: PEXPIRE on each call instead of SET NX PX once (a block that resets on every
-- call, animir/node-rate-limiter-flexible#210). While requests keep coming, the window never
-- ends.
--   limitctl hammer --limiter fixed-window --script testdata/limiters/strict/fixed_window_ttl_renewed.lua \
--     --script-keys '{key}' --script-args '{cost} {window_ms}' --script-allowed 'reply[1] <= {limit}'
-- KEYS[1] the counter  ARGV points, window (ms)
local counter = KEYS[1]
local points = tonumber(ARGV[1])
local window = tonumber(ARGV[2])

local consumed = redis.call('INCRBY', counter, points)
redis.call('PEXPIRE', counter, window)
return {consumed, redis.call('PTTL', counter)}
