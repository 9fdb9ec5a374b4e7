-- BUGGY on purpose (limitctl must catch it): fixed_window_no_keys.lua (StackExchange.Redis's
-- LuaScript calling style, no KEYS) with the comparison one off, so each window admits limit + 1.
local count = redis.call('INCR', ARGV[1])
if count == 1 then
  redis.call('PEXPIRE', ARGV[1], tonumber(ARGV[2]) * 2)
end
if count > tonumber(ARGV[3]) + 1 then -- THE BUG: + 1
  return 0
end
return 1
