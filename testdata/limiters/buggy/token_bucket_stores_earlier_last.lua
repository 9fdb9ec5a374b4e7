-- BUGGY on purpose (limitctl must catch it): token_bucket_tokens.lua (the shipped token-bucket
-- contract), but the time of the last refill is always the caller's now, even when it is earlier
-- than the one stored (a caller whose clock is behind): the next caller refills that gap again,
-- so out-of-order callers keep adding tokens that never were (Spring Cloud Gateway's and
-- Stripe's scripts store the caller's now the same way).
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
-- A request whose now is older refills nothing...
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate)
local allowed = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
-- ...but stores its older now: THE BUG (keep math.max(ts, now))
redis.call('HSET', bucket, 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', bucket, math.ceil(burst / rate) + 1000)
return {allowed, math.floor(tokens), allowed == 1 and 0 or math.ceil((cost - tokens) / rate)}
