-- A fixed-window counter minified the way some clients ship their scripts,
-- written for this repository. gopher-lua splits `0then` into a number and a
-- keyword, but Lua 5.1, which Redis runs, reads it as one malformed number
-- and SCRIPT LOAD refuses the script. KEYS[1] counter; ARGV[1] window_ms.
local n=redis.call('INCR',KEYS[1]) if n==1 then redis.call('PEXPIRE',KEYS[1],ARGV[1]) end if n>0then return n end return 0
