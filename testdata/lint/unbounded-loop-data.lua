-- Loops whose end depends on the data: a SCAN loop inside the script (a
-- cursor returns to "0" only after the whole keyspace), a while over a full
-- LRANGE, and a while over a counter read from Redis.
local cursor = "0"
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 100)
  cursor = page[1]
  -- limitctl:ignore reply-key -- job keys share the queue's {hash tag}
  for _, key in ipairs(page[2]) do redis.call('DEL', key) end
until cursor == "0"

local items = redis.call('LRANGE', KEYS[1], 0, -1)
local i = 1
while i <= #items do
  redis.call('SREM', KEYS[2], items[i])
  i = i + 1
end

local backlog = tonumber(redis.call('LLEN', KEYS[3]))
while backlog > 0 do
  redis.call('RPOPLPUSH', KEYS[3], KEYS[4])
  backlog = backlog - 1
end
return i
