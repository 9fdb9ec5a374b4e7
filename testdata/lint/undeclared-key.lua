-- Keys must come from KEYS so Redis Cluster can route the script.
local key = KEYS[1]
local same = key

redis.call('GET', key)
redis.call('GET', same)
redis.call('GET', ARGV[1])
local name = ARGV[2]
redis.call('DEL', KEYS[2], name)
redis.call('GET', KEYS[1] .. ':meta')
local shadow = 'limit:' .. key
redis.call('HGET', shadow, 'x')
redis.call('EXISTS', 'config')
-- limitctl:ignore missing-expire -- this file is about key names only
redis.call('MSET', KEYS[1], ARGV[1], ARGV[3], 'v')
redis.call('RENAME', KEYS[1], ARGV[4])
for _, member in ipairs(redis.call('ZRANGE', KEYS[3], 0, 9)) do
  redis.call('DEL', member)
end
-- Fine: every key from KEYS, also through ipairs(KEYS); unknown commands
-- and values the linter cannot follow are not guessed at.
for _, k in ipairs(KEYS) do
  redis.call('DEL', k)
end
redis.call('OBJECT', 'ENCODING', ARGV[1])
redis.call(ARGV[5], ARGV[6])
return redis.call('GET', redis.call('GET', KEYS[1]))
