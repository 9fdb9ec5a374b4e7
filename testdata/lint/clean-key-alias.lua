-- A local alias of KEYS[1] (and an alias of the alias) is the declared key:
-- no undeclared-key, and the TTL on the alias covers the write on KEYS[1].
local bucket = KEYS[1]
local same = bucket
local keys = KEYS
redis.call('HINCRBY', KEYS[1], 'tokens', 1)
redis.call('HGET', same, 'tokens')
redis.call('HGET', keys[1], 'tokens')
redis.call('PEXPIRE', same, ARGV[1])
return 1
