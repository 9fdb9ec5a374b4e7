-- BUGGY on purpose (limitctl must catch it): token_bucket_tokens.lua, but the refill is not
-- capped at the burst, so after an idle spell the bucket holds more than it may.
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
  -- Refill for the time since the last refill, never beyond the bucket's size.
  tokens = tokens + (now - ts) * rate -- THE BUG: no math.min(burst, ...)
  ts = now
end
-- A request whose now is older than ts (it raced a newer one to Redis) is judged at its own
-- time: it may not spend tokens that refilled after it was sent.
local available = tokens - (ts - now) * rate
local allowed = 0
if available >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
redis.call('PEXPIRE', bucket, 60000)
return {allowed, math.floor(tokens), allowed == 1 and 0 or math.ceil((cost - tokens) / rate)}
