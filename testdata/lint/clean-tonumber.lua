-- tonumber(ARGV[n]) stored in a local is a number: comparing it and
-- computing with it is fine.
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local count = redis.call('ZCARD', KEYS[1])
if count < limit and now - window > 0 then
  return limit - count
end
if tonumber(ARGV[4]) >= 1 then
  return -limit
end
return 0
