-- BUGGY on purpose (limitctl must catch it): token_bucket_uncapped.lua, but the bucket's key
-- lives only one and a half times as long as the bucket takes to refill. After a rest longer than
-- that the key is gone and the bucket starts full, which hides the missing cap; after a rest
-- between the refill time and the TTL the bucket holds more than its burst. The second release's
-- default load always rested exactly 1.5 refill times and never saw it; its rests now vary (1.3,
-- 1.1, 1.6, ...).
local bucket = KEYS[1]
local rate = tonumber(ARGV[1]) / 1000 -- tokens per ms
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local state = redis.call('HMGET', bucket, 'tokens', 'ts')
local tokens, ts = tonumber(state[1]), tonumber(state[2])
if tokens == nil or ts == nil then
  tokens, ts = burst, now
end
if now > ts then
  tokens = tokens + (now - ts) * rate -- THE BUG: no math.min(burst, ...)
  ts = now
end
local available = tokens - (ts - now) * rate
local allowed = 0
if available >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
redis.call('PEXPIRE', bucket, math.ceil(1.5 * burst / rate)) -- hides the bug after rests of 1.5 refill times
return {allowed, math.floor(tokens), allowed == 1 and 0 or math.ceil((cost - tokens) / rate)}
