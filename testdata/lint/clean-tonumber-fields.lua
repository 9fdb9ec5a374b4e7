-- A token bucket in the style of API-gateway rate limiters (rate, capacity,
-- now and requested in ARGV; a hash with tokens and timestamp fields), written
-- for this repository. Every ARGV value goes through tonumber before it meets
-- a number: directly, with a default (tonumber(x) or 0), or kept in a table
-- of options. None of these comparisons is a reply-type error.
local key = KEYS[1]
local opts = {
  rate = tonumber(ARGV[1]),
  capacity = tonumber(ARGV[2]) or 10,
}
local now = tonumber(ARGV[3]) or 0
local requested = tonumber(ARGV[4] or '1')

local last_tokens = tonumber(redis.call('HGET', key, 'tokens')) or opts.capacity
local last_refreshed = tonumber(redis.call('HGET', key, 'timestamp')) or 0
local delta = math.max(0, now - last_refreshed)
local filled = math.min(opts.capacity, last_tokens + delta * opts.rate)
local allowed = filled >= requested
if allowed and redis.call('HINCRBY', key, 'grants', 1) > opts.capacity then
  allowed = false
end
if -requested < -filled then
  allowed = false
end
local new_tokens = filled
if allowed then
  new_tokens = filled - requested
end
redis.call('HSET', key, 'tokens', new_tokens, 'timestamp', now)
redis.call('EXPIRE', key, math.floor(opts.capacity / opts.rate * 2) + 1)
return {allowed and 1 or 0, new_tokens}
