-- The reservation of missing-expire-key-list.lua with the inventory in the
-- TTL loop's list: every key it writes gets the sale's end as its expiry.
-- Written for this repository.
local qty = tonumber(ARGV[3])
if tonumber(redis.call('HGET', KEYS[1], 'available') or '0') < qty then
  return 0
end
redis.call('HINCRBY', KEYS[1], 'available', -qty)
redis.call('HSET', KEYS[2], ARGV[1], qty)
redis.call('HINCRBY', KEYS[3], ARGV[2], qty)
local sale = {KEYS[1], KEYS[2], KEYS[3]}
for i = 1, #sale do
  redis.call('PEXPIREAT', sale[i], ARGV[4])
end
return 1
