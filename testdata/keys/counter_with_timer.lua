-- A fixed window kept as a counter <key> and a timer <key>:timer holding the window's end (whole
-- seconds since the Unix epoch), both living the window, in the calling style of Laravel's
-- Illuminate\Cache\RateLimiter on a Redis cache store (written for limitctl's tests; no code
-- copied): each is added only when absent, then the counter is incremented.
--
-- KEYS  counter, timer
-- ARGV  decay (s), now (whole s), amount
-- reply the hits in this window
local decay, now, amount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('SETEX', KEYS[2], decay, now + decay)
end
local added = redis.call('EXISTS', KEYS[1]) == 0
if added then
  redis.call('SETEX', KEYS[1], decay, 0)
end
local hits = redis.call('INCRBY', KEYS[1], amount)
if not added and hits == 1 then
  redis.call('SETEX', KEYS[1], decay, 1)
end
return hits
