-- Every key a script writes needs a TTL somewhere in the script.
local counter = KEYS[1]
redis.call('INCR', counter)
redis.call('INCRBY', KEYS[1], 5)
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], 'tokens', ARGV[3])
redis.call('SET', KEYS[4], ARGV[4])

-- Fine: a TTL on the same key, through an alias, or set by the write itself.
local log = KEYS[5]
redis.call('RPUSH', log, ARGV[5])
redis.call('PEXPIRE', KEYS[5], ARGV[6])
redis.call('SET', KEYS[6], ARGV[4], 'PX', ARGV[6])
redis.call('SETEX', KEYS[7], 60, ARGV[4])
redis.call('SADD', KEYS[8], ARGV[2])
redis.call('EXPIRE', KEYS[8], 60)
return 1
