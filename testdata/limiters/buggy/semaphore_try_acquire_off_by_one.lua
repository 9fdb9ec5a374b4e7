-- BUGGY on purpose (limitctl must catch it): semaphore_try_acquire.lua (Redisson's RSemaphore
-- style) that takes a permit while none is left, down to -1: limit + 1 held at once.
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) - 1 then -- THE BUG: - 1
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
