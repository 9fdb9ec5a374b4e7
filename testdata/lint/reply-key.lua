-- A job-queue cleanup script: KEYS[1] set of finished job ids, KEYS[2] the
-- job index hash; ARGV[1] key pattern of stale locks.
-- Every key below comes from a reply, not from KEYS.
local finished = redis.call('SMEMBERS', KEYS[1])
for _, jobKey in ipairs(finished) do
  redis.call('DEL', jobKey)
end
local lockKey = redis.call('HGET', KEYS[2], 'lock')
if lockKey then
  redis.call('UNLINK', lockKey)
end
local oldest = redis.call('ZRANGE', KEYS[3], 0, 0)
if oldest[1] then
  redis.call('HGETALL', oldest[1])
end
redis.call('DEL', unpack(redis.call('LRANGE', KEYS[4], 0, 9)))
return #finished
