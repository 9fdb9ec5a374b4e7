-- A multi-key quota sweep ported from an OpenResty (LuaJIT) limiter, where
-- `goto continue` is the usual way to skip a loop iteration. Written for this
-- repository. gopher-lua's parser accepts goto, but Redis runs Lua 5.1, where
-- the script does not compile: SCRIPT LOAD refuses it.
-- KEYS the quota counters; ARGV[1] the window in milliseconds.
local expired = 0
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) ~= -1 then
    goto continue
  end
  redis.call('PEXPIRE', key, ARGV[1])
  expired = expired + 1
  ::continue::
end
return expired
