-- A lock release in the style of Redlock clients, reformatted so a wrapped
-- expression starts its own line. Written for this repository. Lua 5.1,
-- which Redis runs, reads the ( as a call of `token` on the line above and
-- refuses the script: ambiguous syntax (function call x new statement).
-- KEYS[1] the lock; ARGV[1] the owner's token.
local token = ARGV[1]
local owner = redis.call('GET', KEYS[1])
local held = token
(owner == token and redis.call('DEL', KEYS[1]))
return held and 1 or 0
