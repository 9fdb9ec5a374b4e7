-- upstash/ratelimit's slidingWindow in its calling style (sliding_two_counters.lua), but the previous
-- window is weighed by the share of this one that has elapsed, not the share still to come: it
-- counts nothing of it at the window's start, where it should count it all.
--
-- KEYS  current window counter <id>:<index>, previous <id>:<index-1>, and an optional
--       dynamic-limit key ("" when unused)
-- ARGV  limit, now (ms), window (ms), increment
-- reply {remaining, limit}, remaining -1 when rejected
--
-- limitctl hammer --limiter sliding-window-counter --script buggy/sliding_two_counters_elapsed_weight.lua \
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
local estimate = current + math.floor(elapsed * previous) -- elapsed, where 1 - elapsed is meant

if estimate + increment > limit then
  return {-1, limit}
end

current = redis.call('INCRBY', current_key, increment)
if current == increment then
  -- Kept for two windows: the next window still reads this one as its previous.
  redis.call('PEXPIRE', current_key, window * 2 + 1000)
end
return {limit - estimate - increment, limit}
