-- Creates a semaphore's permits once, in the calling style of Redisson's RSemaphore.trySetPermits
-- (written for limitctl's tests; no code copied): the permits counter is a plain string under the
-- semaphore's name, set only when it does not exist yet; reply 1 when set, 0 when it was there.
--
-- KEYS  the semaphore's name
-- ARGV  permits
--
-- limitctl hammer ... --script-setup-file 'semaphore_try_set_permits.lua {key} , {limit}'
if redis.call('get', KEYS[1]) == false then
  redis.call('set', KEYS[1], ARGV[1])
  return 1
end
return 0
