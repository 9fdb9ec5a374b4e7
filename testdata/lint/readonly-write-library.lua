#!lua name=locks
-- A lock library: acquire writes, owner only reads and is registered
-- no-writes so FCALL_RO can run it on a replica; renew is flagged no-writes by
-- mistake and writes through a helper.

local function extend(key, ttl_ms)
  return redis.call('PEXPIRE', key, ttl_ms)
end

local function acquire(keys, args)
  return redis.call('SET', keys[1], args[1], 'NX', 'PX', args[2])
end

local function owner(keys, args)
  return redis.call('GET', keys[1])
end

redis.register_function('lock_acquire', acquire)
redis.register_function{function_name = 'lock_owner', callback = owner, flags = {'no-writes'}}
redis.register_function{
  function_name = 'lock_renew',
  callback = function(keys, args)
    if redis.call('GET', keys[1]) == args[1] then
      return extend(keys[1], args[2])
    end
    return 0
  end,
  flags = {'no-writes'},
}
