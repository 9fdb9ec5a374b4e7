#!lua name=jobs
-- A job-queue library ported from an EVAL script without finishing the port:
-- the top-level code calls Redis while FUNCTION LOAD runs it, and the
-- function still reads the KEYS and ARGV globals, which do not exist there.

local version = redis.call('GET', 'jobs:version')

redis.register_function('jobs_push', function(keys, args)
  local id = redis.call('INCR', KEYS[1])
  redis.call('HSET', keys[2], id, ARGV[1])
  redis.call('RPUSH', keys[3], id)
  return id
end)
