#!lua name=ratelimit
-- A rate-limit library in the style of Redis 7 Functions: one function per
-- limiter, both registration forms, a helper that gives a TTL to the key its
-- caller passes, and a read-only function for FCALL_RO.

local function expire_window(key, window_ms)
  redis.call('PEXPIRE', key, window_ms)
end

-- fixed window: keys counter; args limit, window_ms. Returns {allowed, count}.
local function fixed_window(keys, args)
  local limit = tonumber(args[1])
  local window = tonumber(args[2])
  local count = redis.call('INCR', keys[1])
  if count == 1 then
    expire_window(keys[1], window)
  end
  if count > limit then
    return {0, count}
  end
  return {1, count}
end

redis.register_function('rl_fixed_window', fixed_window)

redis.register_function{
  function_name = 'rl_sliding_window',
  callback = function(keys, args)
    local limit = tonumber(args[1])
    local now = tonumber(args[2])
    local window = tonumber(args[3])
    redis.call('ZREMRANGEBYSCORE', keys[1], '-inf', now - window)
    local count = redis.call('ZCARD', keys[1])
    if count >= limit then
      return {0, count}
    end
    redis.call('ZADD', keys[1], now, args[4])
    redis.call('PEXPIRE', keys[1], window)
    return {1, count + 1}
  end,
}

redis.register_function{
  function_name = 'rl_peek',
  callback = function(keys, args)
    return tonumber(redis.call('GET', keys[1]) or '0')
  end,
  flags = {'no-writes'},
}
