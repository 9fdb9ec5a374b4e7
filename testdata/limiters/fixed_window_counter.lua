-- A fixed window counter in the calling style of upstash/ratelimit's fixed window (written for
-- limitctl's tests; no code copied): the caller names the window's counter <id>:<index>, the
-- script counts and replies {count, limit}, and the caller decides (count <= limit).
--
-- One difference on purpose: the counter lives for two windows, not one. With a TTL of exactly
-- one window, a request whose now is still in the window but that reaches Redis after the
-- counter expired recreates it at 1 (see buggy/fixed_window_ttl_is_window.lua).
--
-- KEYS  the window's counter <id>:<index>
-- ARGV  limit, window (ms), increment
--
-- limitctl hammer --limiter fixed-window --script fixed_window_counter.lua \
--   --script-keys '{key}:{window_index}' --script-args '{limit} {window_ms} {cost}' \
--   --script-allowed 'reply[1] <= reply[2]'
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local increment = tonumber(ARGV[3])

local count = redis.call('INCRBY', counter, increment)
if count == increment then
  redis.call('PEXPIRE', counter, window * 2)
end
return {count, limit}
