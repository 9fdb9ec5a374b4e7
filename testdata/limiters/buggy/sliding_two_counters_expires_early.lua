-- upstash/ratelimit's slidingWindow in its calling style (sliding_two_counters.lua), but the counter
-- lives one window: the next window finds its previous one gone once as far into it as the first
-- admit was into its own, and admits the whole limit again.
--
-- KEYS  current window counter <id>:<index>, previous <id>:<index-1>, and an optional
--       dynamic-limit key ("" when unused)
-- ARGV  limit, now (ms), window (ms), increment
-- reply {remaining, limit}, remaining -1 when rejected
--
-- limitctl hammer --limiter sliding-window-counter --script buggy/sliding_two_counters_expires_early.lua \
--   --script-keys '{key}:{window_index} {key}:{prev_window_index} ""' \
--   --script-args '{limit} {now_ms} {window_ms} {cost}' --script-allowed 'reply[1] >= 0'
local current_key, previous_key, limit_key = KEYS[1], KEYS[2], KEYS[3]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local increment = tonumber(ARGV[4])

if limit_key ~= '' then
  limit = tonumber(redis.call('GET', limit_key) or limit)
end

local current = tonumber(redis.call('GET', current_key) or '0')
local previous = tonumber(redis.call('GET', previous_key) or '0')
local elapsed = (now % window) / window
local estimate = current + math.floor((1 - elapsed) * previous)

if estimate + increment > limit then
  return {-1, limit}
end

current = redis.call('INCRBY', current_key, increment)
if current == increment then
  redis.call('PEXPIRE', current_key, window) -- one window: gone before the next is through
end
return {limit - estimate - increment, limit}
