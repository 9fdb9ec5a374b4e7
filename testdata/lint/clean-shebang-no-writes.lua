#!lua flags=no-writes,allow-stale
-- Read-only peek at a sliding window log, safe for EVAL_RO and replicas:
-- KEYS[1] log, ARGV now_ms, window_ms. Returns how many requests are in the window.
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
return redis.call('ZCOUNT', KEYS[1], now - window, '+inf')
