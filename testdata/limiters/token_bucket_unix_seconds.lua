-- A token bucket told the time in whole seconds, in the calling style of go-zero's token limiter
-- (written here, not copied; OpenResty's ngx.time() and PHP's time() give the same seconds):
-- KEYS the tokens left and the second they were counted; ARGV refill rate (tokens per second),
-- capacity, now (whole seconds, now.Unix()), tokens requested. Replies true (1) when allowed,
-- false (nil) otherwise. The refill comes a second's worth at a time: exact on the time it is
-- given, so the hammer judges it at whole seconds ({now_s_int}).
--   limitctl hammer --limiter token-bucket --script testdata/limiters/token_bucket_unix_seconds.lua \
--     --script-keys '{key}.tokens {key}.ts' --script-args '{rate_per_s} {burst} {now_s_int} {cost}' \
--     --script-allowed 'reply == 1'
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])

local ttl = math.max(1, math.floor(2 * capacity / rate))
local tokens = tonumber(redis.call('GET', KEYS[1])) or capacity
local counted = tonumber(redis.call('GET', KEYS[2])) or 0
-- Time never runs backwards here: a caller whose second is older refills nothing, and the
-- newest second counted stays.
tokens = math.min(capacity, tokens + math.max(0, now - counted) * rate)
local allowed = tokens >= requested
if allowed then
  tokens = tokens - requested
end
redis.call('SET', KEYS[1], tokens, 'EX', ttl)
redis.call('SET', KEYS[2], math.max(now, counted), 'EX', ttl)
return allowed
