-- purge_stale: remove at most batch members scored at or below cutoff, so one call stays short.
-- KEYS[1] sorted set
-- ARGV[1] cutoff (score, in the set's own unit)  ARGV[2] batch (max members removed by this call)
-- returns {removed, remaining_stale, remaining_total}
local set = KEYS[1]
local cutoff = tonumber(ARGV[1])
local batch = tonumber(ARGV[2])

-- The members scored at or below cutoff are exactly the lowest ranks, so removing ranks
-- 0..n-1 removes the n oldest of them: O(log N + n), and no member names pass through Lua
-- (unpack of a large batch would exceed Lua's stack: "too many results to unpack").
local stale = redis.call('ZCOUNT', set, '-inf', cutoff)
local removed = math.min(stale, batch)
if removed > 0 then
  redis.call('ZREMRANGEBYRANK', set, 0, removed - 1)
end
return {removed, stale - removed, redis.call('ZCARD', set)}
