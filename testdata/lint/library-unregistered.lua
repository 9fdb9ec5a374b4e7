-- A Function library body loaded with EVAL: there is no shebang line, so
-- redis.register_function does not exist and FUNCTION LOAD would refuse the file.
redis.register_function('ping_limiter', function(keys, args)
  return redis.call('PTTL', keys[1])
end)
