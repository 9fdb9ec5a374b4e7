-- An ignore comment silences only the rules it names, on the next line only.
-- limitctl:ignore nondeterministic -- TIME is only logged here
local now = redis.call('TIME')
-- limitctl:ignore undeclared-key
redis.call('SET', ARGV[1], now[1])
redis.call('GET', ARGV[2])
return 1
