#!lua name=jobs
-- A job-queue library ported to Redis 7 Functions from EVAL scripts in the
-- style of a Node job queue, which alias redis.call and cache library
-- functions at the top of the file. Written for this repository. FUNCTION
-- LOAD runs the top level with only redis.register_function, redis.log and
-- redis.REDIS_VERSION, so each line below makes Redis refuse the library.
local rcall = redis.call
local floor = math.floor
local encode = cjson.encode

local handlers = {
  jobs_push = function(keys, args)
    local id = rcall('INCR', keys[1])
    rcall('HSET', keys[2], id, encode({data = args[1], at = floor(tonumber(args[2]))}))
    rcall('PEXPIRE', keys[2], args[3])
    return id
  end,
}

for name, fn in pairs(handlers) do
  redis.register_function(name, fn)
end
