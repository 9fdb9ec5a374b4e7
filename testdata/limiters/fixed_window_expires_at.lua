-- A fixed window opened by the first hit after the last one closed, in the calling style of
-- RedisRateLimiting for ASP.NET Core (written for limitctl's tests; no code copied): a counter
-- and a second key holding when the window closes, in whole Unix seconds, both set to expire a
-- second after it. A call past the close opens a new window; the count is compared before it is
-- raised. The reply is {count, closes at, allowed} with allowed true (1) or false (nil).
--
-- KEYS  the counter, the key of the window's close
-- ARGV  the close of a window opened now (s), now (whole seconds), permits, permits asked
--
-- limitctl hammer --limiter fixed-window --script fixed_window_expires_at.lua \
--   --script-keys '{key} {key}:exp' --script-args '{now_s_int + window_s} {now_s_int} {limit} {cost}' \
--   --script-allowed 'reply[3] == 1'
local counter, closes_key = KEYS[1], KEYS[2]
local next_close = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local permits = tonumber(ARGV[3])
local asked = tonumber(ARGV[4])

local closes = tonumber(redis.call('GET', closes_key))
if not closes or closes < now then
  redis.call('SET', counter, 0)
  redis.call('SET', closes_key, next_close)
  redis.call('EXPIREAT', counter, next_close + 1)
  redis.call('EXPIREAT', closes_key, next_close + 1)
  closes = next_close
end
local count = tonumber(redis.call('GET', counter)) or 0
local allowed = count + asked <= permits
if allowed then
  count = redis.call('INCRBY', counter, asked)
end
return {count, closes, allowed}
