-- BUGGY on purpose (limitctl must catch it): bottleneck_register.lua (Bottleneck's register style)
-- comparing its refresh interval in ms as if it were seconds, so the reservoir refills a thousand
-- times too often.
local settings_key = KEYS[1]
local now = tonumber(ARGV[1])
local client = ARGV[2]
local weight = tonumber(ARGV[3])

if redis.call('exists', settings_key) == 0 then
  return redis.error_reply('SETTINGS_KEY_NOT_FOUND')
end
if redis.call('zscore', KEYS[2], client) == false then
  return redis.error_reply('UNKNOWN_CLIENT')
end

local s = redis.call('hmget', settings_key, 'reservoir', 'reservoirRefreshInterval', 'reservoirRefreshAmount',
  'lastReservoirRefresh', 'minTime', 'nextRequest', 'timeout')
local reservoir = tonumber(s[1])
local interval = tonumber(s[2])
local amount = tonumber(s[3])
local last_refresh = tonumber(s[4])
local min_time = tonumber(s[5])
local next_request = tonumber(s[6])
local timeout = tonumber(s[7])

if now >= last_refresh + interval / 1000 then -- THE BUG: the interval taken as seconds
  reservoir = amount
  redis.call('hmset', settings_key, 'reservoir', reservoir, 'lastReservoirRefresh', now)
end

local success = 0
local wait = 0
if reservoir >= weight then
  success = 1
  wait = math.max(next_request - now, 0)
  reservoir = reservoir - weight
  redis.call('hmset', settings_key, 'reservoir', reservoir, 'nextRequest', now + wait + min_time)
end
redis.call('pexpire', settings_key, timeout)
redis.call('pexpire', KEYS[2], timeout)
return {success, wait, reservoir}
