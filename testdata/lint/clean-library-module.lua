#!lua name=quota
-- The quota library of library-module.lua with its mistakes fixed: the cost
-- is converted before the comparison, the read-only function only reads, and
-- the reset keeps the key's TTL. Written for this repository.
local quota = {}

function quota.take(keys, args)
  local cost = tonumber(args[1]) or 1
  local used = redis.call('INCRBY', keys[1], cost)
  if used == cost then
    redis.call('PEXPIRE', keys[1], args[2])
  end
  return used
end

quota.peek = function(keys, args)
  return tonumber(redis.call('GET', keys[1]) or '0') < tonumber(args[1])
end

local admin = {
  reset = function(keys, args)
    return redis.call('SET', keys[1], 0, 'KEEPTTL')
  end,
}

redis.register_function('quota_take', quota.take)
redis.register_function{function_name = 'quota_peek', callback = quota.peek, flags = {'no-writes'}}
redis.register_function('quota_reset', admin.reset)
