-- A sliding-window log on the server's clock (written for limitctl's tests; no code copied): it
-- reads TIME itself, drops the entries a window old, and admits while fewer than the limit are
-- left, each admit an entry scored by its time in milliseconds.
--
-- KEYS[1]  the log
-- ARGV     limit, window in milliseconds, the request's member
--
-- limitctl hammer --limiter sliding-window --limit 20 --window 1s --script sliding_log_server_time.lua \
--   --script-args '{limit} {window_ms} {member}' --script-allowed 'reply == 1'
local log = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', log, '-inf', now - window)
if redis.call('ZCARD', log) < limit then
  redis.call('ZADD', log, now, ARGV[3])
  redis.call('PEXPIRE', log, window)
  return 1
end
return 0
