-- A fixed window counter as StackExchange.Redis's LuaScript sends it (written for limitctl's
-- tests; no code copied). The .NET source names its parameters,
--
--   local count = redis.call('INCR', @counter)
--   if count == 1 then redis.call('PEXPIRE', @counter, @windowMs * 2) end
--   ...
--
-- and LuaScript.Prepare rewrites each @name into ARGV[i], numbered in the order each name first
-- appears (@counter ARGV[1], @windowMs ARGV[2], @limit ARGV[3]). The caller passes the counter's
-- name as a string (not a RedisKey), so the script is called with no KEYS at all.
--
-- KEYS  none
-- ARGV  the window's counter <id>:<index>, window (ms), limit
--
-- limitctl hammer --limiter fixed-window --script fixed_window_no_keys.lua --no-lint \
--   --script-keys '' --script-args '{key}:{window_index} {window_ms} {limit}' \
--   --script-allowed 'reply == 1'
local count = redis.call('INCR', ARGV[1])
if count == 1 then
  redis.call('PEXPIRE', ARGV[1], tonumber(ARGV[2]) * 2)
end
if count > tonumber(ARGV[3]) then
  return 0
end
return 1
