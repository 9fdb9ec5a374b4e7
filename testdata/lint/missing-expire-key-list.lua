-- A flash-sale reservation in the style of stock-holding scripts that keep
-- an inventory hash, a holds hash and a per-user quota hash under one
-- {sale} hash tag. Written for this repository. KEYS[1] inventory, KEYS[2]
-- holds, KEYS[3] quota; ARGV[1] hold id, ARGV[2] user id, ARGV[3] quantity,
-- ARGV[4] the sale's end (unix ms). The TTL loop names the keys it covers:
-- the inventory, left out of the list, is written but never expires.
local qty = tonumber(ARGV[3])
if tonumber(redis.call('HGET', KEYS[1], 'available') or '0') < qty then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'available', -qty)
redis.call('HSET', KEYS[2], ARGV[1], qty)
redis.call('HINCRBY', KEYS[3], ARGV[2], qty)
for _, key in ipairs({KEYS[2], KEYS[3]}) do
  redis.call('PEXPIREAT', key, ARGV[4])
end
return 1
