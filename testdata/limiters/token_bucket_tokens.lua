-- A token bucket kept as a token count and the time of its last refill (the common textbook
-- shape, unlike the shipped GCRA), with the shipped token_bucket contract.
-- KEYS[1] bucket hash {tokens, ts}
-- ARGV rate_per_s, burst, now_ms, cost
-- reply {allowed 0/1, remaining (whole tokens), retry_after_ms}
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
if available >= cost then
  tokens = tokens - cost
  allowed = 1
end
redis.call('HSET', bucket, 'tokens', tokens, 'ts', ts)
redis.call('PEXPIRE', bucket, math.ceil(burst / rate) + 1000)
return {allowed, math.floor(tokens), allowed == 1 and 0 or math.ceil((cost - tokens) / rate)}
