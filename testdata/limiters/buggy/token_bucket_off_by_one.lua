-- BUGGY on purpose (limitctl must catch it): token_bucket_tokens.lua, but a request passes
-- while the bucket holds cost - 1 tokens or more, so a full bucket gives burst + 1.
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
  tokens = math.min(burst, tokens + (now - ts) * rate)
  ts = now
end
-- A request whose now is older than ts (it raced a newer one to Redis) is judged at its own
-- time: it may not spend tokens that refilled after it was sent.
local available = tokens - (ts - now) * rate
local allowed = 0
if available >= cost - 1 then -- THE BUG: one token short still passes
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
redis.call('PEXPIRE', bucket, math.ceil(burst / rate) + 1000)
return {allowed, math.floor(tokens), allowed == 1 and 0 or math.ceil((cost - tokens) / rate)}
