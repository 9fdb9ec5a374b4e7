-- A float-cost leaky counter in the style of API-credit limiters that charge
-- fractional costs: INCRBYFLOAT has no TTL option, so the script refreshes
-- the window with GETEX ... PX, which gives the key its TTL as SET ... PX
-- does. Written for this repository. KEYS[1] the credit counter; ARGV[1] the
-- cost, ARGV[2] the window in milliseconds, ARGV[3] the credit limit.
local cost = tonumber(ARGV[1])
local spent = tonumber(redis.call('INCRBYFLOAT', KEYS[1], cost))
redis.call('GETEX', KEYS[1], 'PX', ARGV[2])
if spent > tonumber(ARGV[3]) then
  redis.call('INCRBYFLOAT', KEYS[1], -cost)
  return 0
end
return 1
