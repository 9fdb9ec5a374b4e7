-- A stray '=' stops the parse; nothing else in the file is checked.
local limit = tonumber(ARGV[1])
local count = = redis.call('INCR', KEYS[1])
return count
