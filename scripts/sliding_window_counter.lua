-- sliding_window_counter: admit while this window's count plus the previous window's, weighted by
-- the share of it still inside the sliding window and floored, stays below the limit.
-- KEYS[1] this window's counter, KEYS[2] the previous window's (the caller names each window in its
--         key by the same now, e.g. rl:user:42:<now_ms // window_ms> and rl:user:42:<that - 1>)
-- ARGV[1] limit  ARGV[2] now_ms  ARGV[3] window_ms
-- returns {allowed 0/1, estimate}: the weighted count, this request included when admitted
local current_key, previous_key = KEYS[1], KEYS[2]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local current = tonumber(redis.call('GET', current_key) or '0')
local previous = tonumber(redis.call('GET', previous_key) or '0')
-- Whole numbers below 2^53 throughout, so the floor is the exact one.
local weighted = math.floor(previous * (window - now % window) / window)
if current + weighted >= limit then
  -- A refusal writes nothing: only admits are counted.
  return {0, current + weighted}
end
current = redis.call('INCR', current_key)
if current == 1 or redis.call('PTTL', current_key) < 0 then
  -- Two windows, not one: the next window still reads this one as its previous.
  redis.call('PEXPIRE', current_key, 2 * window)
end
return {1, current + weighted}
