-- BUGGY on purpose (limitctl must catch it): the shipped fixed-window contract, but the request
-- passes while count <= limit, so each window admits limit + 1.
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local count = tonumber(redis.call('GET', counter) or '0')
if count <= limit then -- THE BUG: <= instead of <
  count = redis.call('INCR', counter)
  redis.call('PEXPIRE', counter, 2 * window)
  return {1, count, 2 * window}
end
return {0, count, redis.call('PTTL', counter)}
