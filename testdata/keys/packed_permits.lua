-- A rate limiter that keeps each grant as a packed binary record in a sorted set scored by the
-- grant's time (ms), and the permits left in a string beside it, in the calling style of
-- Redisson's RRateLimiter (written for limitctl's tests; no code copied). The limiter itself
-- removes grants older than the interval and adds their permits back to the value; a grant
-- removed by anyone else never gives its permits back.
--
-- KEYS  value string, permits sorted set
-- ARGV  rate, interval (ms), permits, now (ms), random id
-- reply nil when granted, else the ms to wait
local rate, interval = tonumber(ARGV[1]), tonumber(ARGV[2])
local permits, now = tonumber(ARGV[3]), tonumber(ARGV[4])

local value = tonumber(redis.call('GET', KEYS[1]))
if value == nil then
  value = rate
  redis.call('SET', KEYS[1], rate)
end
local old = redis.call('ZRANGEBYSCORE', KEYS[2], 0, now - interval)
local released = 0
for _, record in ipairs(old) do
  local _, n = struct.unpack('Bc0I', record)
  released = released + n
end
if released > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], 0, now - interval)
  value = math.min(rate, value + released)
  redis.call('SET', KEYS[1], value)
end
if value < permits then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return interval - (now - tonumber(first[2]))
end
redis.call('ZADD', KEYS[2], now, struct.pack('Bc0I', #ARGV[5], ARGV[5], permits))
redis.call('DECRBY', KEYS[1], permits)
return nil
