-- Valkey spells redis.call server.call; a fixed window in that spelling.
-- KEYS[1] counter; ARGV limit, window_ms.
local limit = tonumber(ARGV[1])
local count = server.call('INCR', KEYS[1])
if count == 1 then
  server.pcall('PEXPIRE', KEYS[1], ARGV[2])
end
return {count <= limit and 1 or 0, count}
