-- The quota sweep of syntax-goto.lua in Lua 5.1: the rest of the loop body
-- sits in an if instead of behind a goto. Written for this repository.
-- KEYS the quota counters; ARGV[1] the window in milliseconds.
local expired = 0
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ARGV[1])
    expired = expired + 1
  end
end
return expired
