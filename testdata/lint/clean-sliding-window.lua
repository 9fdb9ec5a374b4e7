-- Sliding window log: drop what left the window, count, log the request.
-- KEYS[1] log; ARGV limit, now_ms, window_ms, member.
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local member = ARGV[4]

redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
local count = redis.call('ZCARD', log)
if count >= limit then
  return {0, count}
end
redis.call('ZADD', log, now, member)
redis.call('PEXPIRE', log, window)
return {1, count + 1}
