-- Layouts Lua 5.1 accepts although a ( starts a line: a function's parameter
-- list, an expression after a table constructor or a semicolon, and a call
-- with a string argument. Written for this repository, in the style of the
-- Redlock release of syntax-ambiguous-call.lua. KEYS[1] the lock; ARGV[1]
-- the owner's token.
local function release
(key, token)
  if redis.call('GET', key) == token then
    return redis.call('DEL', key)
  end
  return 0
end
local owners = {};
(redis.log)(redis.LOG_DEBUG, 'release')
local held = tostring
'1'
return release(KEYS[1], ARGV[1]) + #owners + #held
