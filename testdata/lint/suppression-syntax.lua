-- A suppression comment cannot hide a file that does not parse: nothing
-- else in it was checked.
-- limitctl:ignore syntax
local count = = redis.call('INCR', KEYS[1])
return count
