-- Token bucket: refill from the time the client passed, spend, and keep the
-- hash's TTL as long as a full refill takes.
-- KEYS[1] bucket hash; ARGV rate_per_s, burst, now_ms, cost.
local bucket = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local state = redis.call('HMGET', bucket, 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
local elapsed = math.max(0, now - ts)
tokens = math.min(burst, tokens + elapsed * rate / 1000)

local allowed = 0
local retry_after = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry_after = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', bucket, math.ceil(burst * 1000 / rate))
return {allowed, math.floor(tokens), retry_after}
