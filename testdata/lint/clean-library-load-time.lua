#!lua name=jobs
-- The library of library-load-time.lua written so FUNCTION LOAD accepts it:
-- the aliases are taken inside the function, where the whole Redis Lua API
-- exists, and the top level only defines and registers. Written for this
-- repository.
redis.log(redis.LOG_NOTICE, 'loading jobs on ' .. redis.REDIS_VERSION)

local function push(keys, args)
  local rcall = redis.call
  local id = rcall('INCR', keys[1])
  rcall('PEXPIRE', keys[1], args[3])
  rcall('HSET', keys[2], id, cjson.encode({data = args[1], at = math.floor(tonumber(args[2]))}))
  rcall('PEXPIRE', keys[2], args[3])
  return id
end

redis.register_function('jobs_push', push)
