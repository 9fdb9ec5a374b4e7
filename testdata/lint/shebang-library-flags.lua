#!lua name=limits flags=no-writes
-- A library whose shebang carries EVAL's flags=: FUNCTION LOAD refuses it
-- (Invalid metadata value given); flags belong to each registered function.
redis.register_function{
  function_name = 'limits_peek',
  callback = function(keys, args)
    return tonumber(redis.call('GET', keys[1]) or '0')
  end,
  flags = {'no-writes'},
}
