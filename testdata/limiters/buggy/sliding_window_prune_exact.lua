-- BUGGY on purpose (limitctl must catch it): the shipped sliding-window contract, but the log
-- is pruned at exactly now - window and then counted whole. A request whose now is older than
-- one that already ran (clients race to Redis) finds members of its own window pruned.
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window) -- THE BUG: prunes the racing requests' window
local count = redis.call('ZCARD', log)
if count < limit then
  redis.call('ZADD', log, now, ARGV[4])
  redis.call('PEXPIRE', log, window)
  return {1, count + 1}
end
return {0, count}
