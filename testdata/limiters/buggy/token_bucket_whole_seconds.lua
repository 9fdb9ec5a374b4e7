-- BUGGY on purpose (limitctl must catch it): token_bucket_two_keys.lua reading the server's TIME
-- to the whole second only, as Spring Cloud Gateway's script did before it took the microseconds:
-- the refill comes a second's worth at once, so a burst just before a second turns and another
-- just after it are burst + rate requests in a few milliseconds. Same flags as
-- token_bucket_two_keys.lua.
redis.replicate_commands()

local tokens_key, stamp_key = KEYS[1], KEYS[2]
local per_second = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local asked = tonumber(ARGV[4])

local now = tonumber(ARGV[3])
if now == nil then
  now = tonumber(redis.call('TIME')[1])
end

-- Both keys outlive a full refill twice over; past that the bucket is full anyway.
local keep_s = math.max(1, math.ceil(2 * capacity / per_second))

local left = tonumber(redis.call('GET', tokens_key)) or capacity
local counted_at = tonumber(redis.call('GET', stamp_key)) or 0
-- Time never runs backwards here: a request whose now is older refills nothing.
local refill = math.max(0, now - counted_at) * per_second
local available = math.min(capacity, left + refill)

local allowed = 0
if available >= asked then
  available = available - asked
  allowed = 1
end
redis.call('SET', tokens_key, available, 'EX', keep_s)
redis.call('SET', stamp_key, math.max(now, counted_at), 'EX', keep_s)
return {allowed, math.floor(available)}
