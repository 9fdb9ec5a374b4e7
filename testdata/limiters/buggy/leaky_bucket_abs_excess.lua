-- BUGGY on purpose (limitctl must catch it): a leaky bucket in the calling style of OpenResty's
-- lua-resty-redis-ratelimit (written for limitctl's tests; no code copied). The state is a JSON
-- array {excess, last, forbidden} in one string key, excess in thousandths of a request; a call
-- drains it by rate times the time since the last admitted call, taken as abs(now - last), adds
-- one request, and is refused (BUSY) when that is more than the burst, without storing anything.
-- So a caller whose clock is behind the last admitted caller's drains the bucket by the gap, and
-- the next one ahead drains it by the same gap again: every backwards step refills it twice.
-- It replies {1, excess} when admitted, {2, excess} when busy, {3, excess} when forbidden.
--
-- KEYS  the state
-- ARGV  rate (thousandths of a request per second), burst (thousandths), now (ms, with
--       fraction), forbid for (s; 0: never)
--
-- limitctl hammer --limiter token-bucket --script leaky_bucket_abs_excess.lua --script-keys '{key}' \
--   --script-args '{rate_per_s * 1000} {burst * 1000} {now_ms} 0' --script-allowed 'reply[1] == 1'
local key = KEYS[1]
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local now, forbid_for = tonumber(ARGV[3]), tonumber(ARGV[4])

local excess, last, forbidden = 0, 0, 0
local state = redis.call('GET', key)
if state then
  local v = cjson.decode(state)
  excess, last, forbidden = v[1], v[2], v[3]
  if forbidden == 1 then
    return {3, excess}
  end
  excess = math.max(0, excess - rate * math.abs(now - last) / 1000 + 1000) -- THE BUG: abs
  if excess > burst then
    if forbid_for > 0 then
      redis.call('SET', key, cjson.encode({excess, now, 1}), 'EX', forbid_for)
    end
    return {2, excess}
  end
end
redis.call('SET', key, cjson.encode({excess, now, 0}), 'EX', 60)
return {1, excess}
