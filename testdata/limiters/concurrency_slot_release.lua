-- The release of concurrency_slots.lua as a script of its own, as Laravel's ConcurrencyLimiter
-- releases (written here, not copied): KEYS the slot the acquire answered it took; ARGV the
-- request's id. The slot is deleted only while it still holds that id (a slot held past its
-- time may already be someone else's). Replies 1 when released, 0 otherwise.
--   --script-release-file testdata/limiters/concurrency_slot_release.lua \
--   --script-release-keys '{reply}' --script-release-args '{member}'
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
