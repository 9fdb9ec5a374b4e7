-- TOO STRICT on purpose: concurrency_deadlines_whole_seconds.lua (APISIX limit-conn's calling style,
-- deadlines on whole seconds) with its removal of expired deadlines dropped: a request abandoned by
-- a client that crashed holds its place until the whole set expires, a TTL after the last request
-- started, so under steady load it is counted long after its deadline passed.
--
-- limitctl hammer --limiter concurrency --script testdata/limiters/strict/concurrency_deadlines_whole_seconds_never_dropped.lua \
--   --script-keys '{key}' --script-args '{limit} {stale_after_s} {window_index} {member}' \
--   --script-allowed 'reply[1] == 1' --script-release 'ZREM {key} {member}' --window 1s
local set = KEYS[1]
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local id = ARGV[4]

local held = redis.call('ZCARD', set)
if held >= limit then
  return {0, held}
end
redis.call('ZADD', set, now + ttl, id)
redis.call('EXPIRE', set, ttl)
return {1, held + 1}
