-- TOO STRICT on purpose: a counter opened by the first hit (SET NX PX, then INCRBY, as
-- rate-limiter-flexible does) that, once over the limit, clamps the counter back to the limit
-- with a plain SET so it does not grow with blocked calls. SET without KEEPTTL drops the
-- expiry: the counter is written without a TTL where the window should end, and it refuses for
-- ever (the class of marcosbarbero/spring-cloud-zuul-ratelimit#131, a quota key that never
-- expires).
--   limitctl hammer --limiter fixed-window --script testdata/limiters/strict/fixed_window_clamp_drops_ttl.lua \
--     --script-keys '{key}' --script-args '{limit} {window_ms} {cost}' --script-allowed 'reply[1] == 1'
-- KEYS[1] the counter  ARGV limit, window (ms), points
-- reply {allowed 0/1, consumed}
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local points = tonumber(ARGV[3])

redis.call('SET', counter, 0, 'PX', window, 'NX')
local consumed = redis.call('INCRBY', counter, points)
if consumed > limit then
  redis.call('SET', counter, limit) -- the bug: the window's expiry is gone
  return {0, limit}
end
return {1, consumed}
