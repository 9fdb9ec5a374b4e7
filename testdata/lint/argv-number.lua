-- ARGV values are strings: convert them before arithmetic or ordering.
local limit = ARGV[1]
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2] * 1000)
if count > limit then
  return 0
end
if ARGV[3] <= ARGV[4] then
  return -ARGV[5]
end

-- Fine: converted once, then compared and computed with.
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[6]) or 10
if count <= window and count < burst then
  return window - count
end
return ARGV[1] == '0'
