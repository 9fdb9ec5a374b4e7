-- TOO STRICT on purpose: a token bucket (tokens and the time of the last refill, the textbook
-- shape) that refills 60 times too slowly: it reads the rate per second as a rate per minute.
-- Called with the shipped token-bucket contract:
--   limitctl hammer --limiter token-bucket --script testdata/limiters/strict/token_bucket_slow_refill.lua
-- KEYS[1] bucket hash {tokens, ts}  ARGV rate_per_s, burst, now_ms, cost
local bucket = KEYS[1]
local rate = tonumber(ARGV[1]) / 60000 -- the bug: tokens per ms, were the rate per minute
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
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
redis.call('PEXPIRE', bucket, math.ceil(burst / rate) + 1000)
return {allowed, math.floor(tokens), 0}
