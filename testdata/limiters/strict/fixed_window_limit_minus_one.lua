-- TOO STRICT on purpose: a fixed window counter in the calling style of upstash/ratelimit's
-- fixed window (<id>:<window_index>, reply {count, limit}) that admits limit - 1 per window: it
-- refuses once the count after this request would reach the limit, not pass it.
--   limitctl hammer --limiter fixed-window --script testdata/limiters/strict/fixed_window_limit_minus_one.lua \
--     --script-keys '{key}:{window_index}' --script-args '{limit} {window_ms} {cost}' \
--     --script-allowed 'reply[1] > 0'
-- KEYS[1] the window's counter  ARGV limit, window (ms), increment
-- reply {count after this request, or 0 when refused; limit}
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local increment = tonumber(ARGV[3])

local count = tonumber(redis.call('GET', counter) or '0')
if count + increment >= limit then
  return {0, limit}
end
count = redis.call('INCRBY', counter, increment)
if count == increment then
  redis.call('PEXPIRE', counter, window * 2)
end
return {count, limit}
