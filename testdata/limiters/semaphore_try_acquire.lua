-- A semaphore's tryAcquire in the calling style of Redisson's RSemaphore (written for limitctl's
-- tests; no code copied): it works only on permits that trySetPermits created first
-- (semaphore_try_set_permits.lua, run by --script-setup-file), takes them while enough are left,
-- and replies 1 (acquired) or 0. release() is INCRBY on the same name.
--
-- KEYS  the semaphore's name
-- ARGV  permits to take
--
-- limitctl hammer --limiter concurrency --script semaphore_try_acquire.lua \
--   --script-setup-file 'semaphore_try_set_permits.lua {key} , {limit}' \
--   --script-setup 'PEXPIRE {key} 600000' \
--   --script-keys '{key}' --script-args '{cost}' --script-allowed 'reply == 1' \
--   --script-release 'INCRBY {key} {cost}'
local value = redis.call('get', KEYS[1])
if value ~= false and tonumber(value) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
