#!lua flags=no_writes,allow-stale
-- A read-only peek at a fixed window, written for EVAL_RO, with the flag
-- misspelt: Redis refuses the script (Unexpected flag in script shebang).
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return count
