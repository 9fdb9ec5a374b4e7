-- BUGGY on purpose (limitctl must catch it): the shipped fixed-window contract, but the counter
-- lives exactly one window from its first request. A request whose now is still in that window
-- but that reaches Redis after the counter expired recreates it at 1 and passes.
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local count = redis.call('INCR', counter)
if count == 1 then
  redis.call('PEXPIRE', counter, window) -- THE BUG: one window, not two
end
if count <= limit then
  return {1, count, window}
end
return {0, count, redis.call('PTTL', counter)}
