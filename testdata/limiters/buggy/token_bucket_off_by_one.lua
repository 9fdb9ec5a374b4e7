-- BUGGY on purpose (limitctl must catch it): token_bucket_tokens.lua, but a request passes
-- while the bucket holds more than cost - 1 tokens, so a full bucket gives burst + 1.
local bucket = KEYS[1]
local rate = tonumber(ARGV[1]) / 1000
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local state = redis.call('HMGET', bucket, 'tokens', 'ts')
local tokens, ts = tonumber(state[1]), tonumber(state[2])
if tokens == nil or ts == nil then
  tokens, ts = burst, now
end
if now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate)
  ts = now
end
local allowed = 0
if tokens > cost - 1 then -- THE BUG: one token short still passes
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
redis.call('PEXPIRE', bucket, math.ceil(burst / rate) + 1000)
return {allowed, math.floor(math.max(tokens, 0)), 0}
