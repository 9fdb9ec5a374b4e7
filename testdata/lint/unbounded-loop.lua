-- Loops that can run for as long as the data grows block Redis.
while true do
  if redis.call('LPOP', KEYS[1]) == false then break end
end

repeat
  local moved = redis.call('RPOPLPUSH', KEYS[1], KEYS[2])
until false

local members = redis.call('ZRANGE', KEYS[3], 0, -1)
for _, member in ipairs(members) do
  redis.call('HDEL', KEYS[4], member)
end

local fields = redis.call('HGETALL', KEYS[4])
for i = 1, #fields, 2 do
  redis.call('SREM', KEYS[5], fields[i])
end

for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])) do
  redis.call('SREM', KEYS[5], m)
end

-- Fine: a bounded range, a LIMIT, a loop that calls nothing, a counter.
for _, m in ipairs(redis.call('ZRANGE', KEYS[3], 0, 99)) do
  redis.call('SREM', KEYS[5], m)
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, 100)) do
  redis.call('SREM', KEYS[5], m)
end
local total = 0
for _, m in ipairs(members) do
  total = total + #m
end
for i = 1, 10 do
  if redis.call('LPOP', KEYS[1]) == false then break end
end
return total
