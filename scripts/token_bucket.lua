-- token_bucket: take cost tokens from a bucket refilled at rate_per_s up to burst.
-- KEYS[1] bucket hash {tokens, ts}
-- ARGV[1] rate_per_s  ARGV[2] burst  ARGV[3] now_ms  ARGV[4] cost
-- returns {allowed 0/1, remaining (whole tokens), retry_after_ms}
local bucket = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local state = redis.call('HMGET', bucket, 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
-- Refill only forward in time: a racing client with an older clock must not mint tokens.
if now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  ts = now
end
local allowed = 0
local retry_after = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry_after = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
-- Long enough to refill completely; after that a missing bucket means a full one.
redis.call('PEXPIRE', bucket, math.ceil(burst * 1000 / rate) + 1000)
return {allowed, math.floor(tokens), retry_after}
