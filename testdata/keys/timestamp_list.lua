-- A request log kept as a list of timestamps, newest first, in the calling style of
-- sidekiq-throttled's threshold strategy (written for limitctl's tests; no code copied): throttled
-- when the list holds the limit and its oldest entry is younger than the period; otherwise the
-- request's time is pushed, the list trimmed to the limit and expired after the period.
--
-- KEYS  the list
-- ARGV  limit, period (s), now (s, with fraction)
-- reply 1 throttled, 0 passed
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local now = tonumber(ARGV[3])

if redis.call('LLEN', KEYS[1]) >= limit and now - tonumber(redis.call('LINDEX', KEYS[1], -1)) < period then
  return 1
end
redis.call('LPUSH', KEYS[1], ARGV[3])
redis.call('LTRIM', KEYS[1], 0, limit - 1)
redis.call('EXPIRE', KEYS[1], period)
return 0
