-- TOO STRICT on purpose: a GCRA in the calling style of go-redis/redis_rate (a plain string
-- TAT with a TTL; reply {allowed, remaining, retry_after, reset_after}) whose burst is one token
-- short: a request may pass only once the bucket would still hold a token after it.
-- redis_rate reads TIME; this one takes now in ARGV, so the hammer judges it by the time it
-- passed (with --clock virtual a TIME-reading version would be judged the same way).
--   limitctl hammer --limiter token-bucket --script testdata/limiters/strict/gcra_one_token_short.lua \
--     --script-args '{burst} {rate_per_s} {now_ms} {cost}' --script-allowed 'reply[1] > 0'
-- KEYS[1] the bucket  ARGV burst, rate (per second), now (ms), cost
local bucket = KEYS[1]
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local interval = 1000 / rate
local tat = tonumber(redis.call('GET', bucket) or now)
if tat < now then
  tat = now
end
local new_tat = tat + cost * interval
local allow_at = new_tat - (burst - 1) * interval -- the bug: burst - 1
if now < allow_at then
  return {0, 0, tostring(allow_at - now), tostring(tat - now)}
end
redis.call('SET', bucket, new_tat, 'PX', math.ceil(new_tat - now) + 1000)
return {cost, math.floor((now - allow_at) / interval), '-1', tostring(new_tat - now)}
