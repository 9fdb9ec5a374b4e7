-- BUGGY on purpose (limitctl must catch it): the shipped sliding-window contract, but the
-- member is the millisecond timestamp, so requests in the same millisecond collapse into one.
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - 2 * window)
local count = redis.call('ZCOUNT', log, '(' .. (now - window), '+inf')
if count < limit then
  redis.call('ZADD', log, now, ARGV[2]) -- THE BUG: the time, not the request id ARGV[4]
  redis.call('PEXPIRE', log, 2 * window)
  return {1, count + 1}
end
return {0, count}
