-- BUGGY on purpose (limitctl must catch it): a GCRA (the shipped token-bucket contract) that
-- trusts each caller's clock: when a caller's now is behind the newest it has seen, it moves the
-- schedule back by the difference ("the caller's clock is the right one"), so callers whose clocks
-- disagree pull the theoretical arrival time back, over and over, and the bucket hands out more
-- than it refills. A correct GCRA keeps tat = max(tat, now) and nothing else.
local bucket = KEYS[1]
local interval = 1000 / tonumber(ARGV[1]) -- ms per token
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local state = redis.call('HMGET', bucket, 'tat', 'seen')
local tat, seen = tonumber(state[1]) or now, tonumber(state[2]) or now
if now < seen then
  tat = tat - (seen - now) -- THE BUG: the schedule follows the caller's clock back
end
tat = math.max(tat, now)
local new_tat = tat + cost * interval
local allowed = 0
if now >= new_tat - burst * interval then
  allowed = 1
  tat = new_tat
end
redis.call('HSET', bucket, 'tat', tat, 'seen', now)
redis.call('PEXPIRE', bucket, math.ceil(tat - now) + 1000)
return {allowed, math.max(0, math.floor((now - (tat - burst * interval)) / interval)), allowed == 1 and 0 or math.ceil(new_tat - burst * interval - now)}
