-- A fixed window opened by the first hit, in the calling style of rate-limiter-flexible
-- (written for limitctl's tests; no code copied): SET key 0 EX duration NX starts a window only
-- when none is open, INCRBY consumes, and the reply {consumed, pttl} leaves the decision to the
-- caller (consumed <= points). The window starts at the first request, not at a multiple of
-- the duration, and the script is given no time: the server's clock (key expiry) decides.
--
-- KEYS  the counter
-- ARGV  points to consume, duration (s)
--
-- limitctl hammer --limiter fixed-window --limit 20 --window 1s --script fixed_window_first_hit.lua \
--   --script-keys '{key}' --script-args '{cost} {window_s}' --script-allowed 'reply[1] <= 20'
local counter = KEYS[1]
local points = tonumber(ARGV[1])
local duration = tonumber(ARGV[2])

redis.call('SET', counter, 0, 'EX', duration, 'NX')
local consumed = redis.call('INCRBY', counter, points)
return {consumed, redis.call('PTTL', counter)}
