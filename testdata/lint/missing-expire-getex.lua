-- The credit counter of clean-getex-ttl.lua refreshed with GETEX but without
-- an expiry option (GETEX ... PERSIST even removes the TTL), so the counter
-- never expires. Written for this repository.
local cost = tonumber(ARGV[1])
local spent = tonumber(redis.call('INCRBYFLOAT', KEYS[1], cost))
redis.call('GETEX', KEYS[1], 'PERSIST')
if spent > tonumber(ARGV[3]) then
  redis.call('INCRBYFLOAT', KEYS[1], -cost)
  return 0
end
return 1
