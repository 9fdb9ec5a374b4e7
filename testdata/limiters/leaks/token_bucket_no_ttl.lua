-- token_bucket_no_ttl: the shipped token_bucket without its PEXPIRE (a leak: the bucket hash stays
-- for ever once traffic stops).
-- Kept as GCRA (the theoretical arrival time of the next token, as go-redis/redis_rate does):
-- one number per key, and exact even when racing clients' now values reach Redis out of order.
-- KEYS[1] bucket hash {tat}
-- ARGV[1] rate_per_s  ARGV[2] burst  ARGV[3] now_ms  ARGV[4] cost
-- returns {allowed 0/1, remaining (whole tokens), retry_after_ms}
local bucket = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local interval = 1000 / rate -- ms per token
local tat = tonumber(redis.call('HGET', bucket, 'tat'))
if tat == nil or tat < now then
  tat = now
end
local new_tat = tat + cost * interval
-- Near 1.7e12 ms one step of a double is 2^-12 ms, and the sum is rounded to the nearest step:
-- rounded down on every admit, the bucket would gain a sliver of a token each time (at 3,000/s,
-- 2 too many in 10s). The difference below is exact (the two are within a factor of 2), so a
-- sum that came out short is moved one step up: rounding only ever makes the bucket stricter.
if new_tat - tat < cost * interval then
  local _, exp = math.frexp(new_tat)
  new_tat = new_tat + 2 ^ (exp - 53)
end
-- The request may pass once the bucket would hold cost tokens: no earlier than
-- new_tat - burst * interval.
local allow_at = new_tat - burst * interval
if now < allow_at then
  local remaining = math.max(0, math.floor((now - (tat - burst * interval)) / interval))
  return {0, remaining, math.ceil(allow_at - now)}
end
redis.call('HSET', bucket, 'tat', new_tat)
return {1, math.floor((now - allow_at) / interval), 0}
