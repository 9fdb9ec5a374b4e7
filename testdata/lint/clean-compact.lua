-- The scripts of syntax-compact.lua and syntax-empty-statement.lua written
-- so Lua 5.1 compiles them: a space after each number, one ';' at most
-- between statements, ';' separators in a table. Written for this repository.
-- KEYS[1] counter, KEYS[2] lock; ARGV[1] window_ms, ARGV[2] token.
local n=redis.call('INCR',KEYS[1]) if n==1 then redis.call('PEXPIRE',KEYS[1],ARGV[1]) end
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('PEXPIRE', KEYS[2], ARGV[1]); end;
local limits = {10; 1e2; .5; 0x1F;}
if n>0 then return n+limits[1] end return 0;
