-- Time and randomness belong in ARGV.
local now = redis.call('TIME')
local victim = redis.call('SRANDMEMBER', KEYS[1])
redis.call('SPOP', KEYS[1])
local any = redis.call('RANDOMKEY')
local jitter = math.random(100)

-- TIME used only for a log line is still warned: the script's effects do not
-- depend on it, but the next edit may, and tests still cannot pin it.
local t = redis.call('time')
redis.log(redis.LOG_NOTICE, 'acquire at ' .. t[1])
return {victim, any, jitter, now[1]}
