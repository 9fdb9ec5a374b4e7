-- BUGGY on purpose (limitctl must catch it): the shipped sliding-window-counter contract, but the
-- request passes while the estimate is at most the limit (> where the script has >=), so a
-- contended window admits one too many.
local current_key, previous_key = KEYS[1], KEYS[2]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])

local current = tonumber(redis.call('GET', current_key) or '0')
local previous = tonumber(redis.call('GET', previous_key) or '0')
-- Whole numbers below 2^53 throughout, so the floor is the exact one.
local weighted = math.floor(previous * (window - now % window) / window)
if current + weighted > limit then
  -- A refusal writes nothing: only admits are counted.
  return {0, current + weighted}
end
current = redis.call('INCR', current_key)
if current == 1 or redis.call('PTTL', current_key) < 0 then
  -- Two windows, not one: the next window still reads this one as its previous.
  redis.call('PEXPIRE', current_key, 2 * window)
end
return {1, current + weighted}
