-- A scheduler that answers when the caller may act instead of refusing, in the calling style of a
-- reservation as golang.org/x/time/rate's Limiter.Reserve gives one (the time to act at), kept in
-- Redis as GCRA's theoretical arrival time (written for limitctl's tests; no code copied). A
-- burst acts at once; later callers get the next slots, one emission interval apart. A caller
-- whose slot is further away than it will wait is refused, and takes no slot (as Wait does when
-- the delay passes its deadline).
--
-- KEYS  the limiter's key (a string: the theoretical arrival time, ms)
-- ARGV  now (ms), emission interval (ms), burst, longest wait (ms)
-- Reply {1, the time to act at (ms)} or {0, that time} when refused
--
-- limitctl hammer --limiter token-bucket --script reserve_slots.lua --script-keys '{key}' \
--   --script-args '{now_ms} {window_ms / limit} {limit} {window_ms}' \
--   --script-allowed 'reply[1] == 1' --script-admit-at 'reply[2]'
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local max_wait = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local at = math.max(now, tat - (burst - 1) * interval)
if at - now > max_wait then
  return {0, at}
end
tat = math.max(tat, at) + interval
redis.call('SET', KEYS[1], tat, 'PX', math.ceil(tat - now) + 1000)
return {1, at}
