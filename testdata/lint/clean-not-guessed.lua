-- What the linter cannot follow, it does not guess at: computed command
-- names, unknown commands, function parameters, call results, SET options
-- it cannot read, and a TTL given to a key it cannot name.
local function touch(key, ttl)
  redis.call('PEXPIRE', key, ttl)
end
local command = ARGV[1]
redis.call(command, KEYS[1])
redis.call('OBJECT', 'FREQ', ARGV[2])
redis.call('INCR', KEYS[1])
touch(KEYS[1], tonumber(ARGV[3]))
redis.call('SET', KEYS[2], ARGV[4], ARGV[5], ARGV[6])
local members = redis.call('ZRANGE', KEYS[3], 0, tonumber(ARGV[7]))
for _, m in ipairs(members) do
  redis.call('ZREM', KEYS[3], m)
end
while false do
  redis.call('INCR', KEYS[1])
end
return redis.call('GET', unpack(KEYS))
