-- purge_stale: remove at most batch members scored at or below cutoff, so one call stays short.
-- KEYS[1] sorted set
-- ARGV[1] cutoff (score, in the set's own unit)  ARGV[2] batch (max members removed by this call)
-- returns {removed, remaining_stale, remaining_total}
local set = KEYS[1]
local cutoff = tonumber(ARGV[1])
local batch = tonumber(ARGV[2])

local stale = redis.call('ZRANGEBYSCORE', set, '-inf', cutoff, 'LIMIT', 0, batch)
local removed = 0
if #stale > 0 then
  removed = redis.call('ZREM', set, unpack(stale))
end
local remaining_stale = redis.call('ZCOUNT', set, '-inf', cutoff)
return {removed, remaining_stale, redis.call('ZCARD', set)}
