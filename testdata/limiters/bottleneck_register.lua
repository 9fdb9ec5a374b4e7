-- A job scheduled by a reservoir limiter, in the calling style of Bottleneck's Redis datastore
-- `register` (written for limitctl's tests; no code copied). It works only on the settings that
-- init created and for a client that register_client made known (bottleneck_init.lua and
-- bottleneck_register_client.lua, run by --script-setup-file). The reservoir is refilled to its
-- refresh amount on the first call a refresh interval after the last refill, so its windows open at
-- a call, not on the epoch. The reply says whether the job may run, after how many ms, and what
-- is left: {success, wait, reservoir}.
--
-- KEYS  settings hash, client_last_registered zset
-- ARGV  now (ms), client id, weight
--
-- limitctl hammer --limiter fixed-window --script bottleneck_register.lua \
--   --script-setup-file 'bottleneck_init.lua {key}:settings {key}:client_last_registered , {now_ms} 0 reservoir {limit} reservoirRefreshInterval {window_ms} reservoirRefreshAmount {limit} minTime 0 timeout 600000' \
--   --script-setup-file 'bottleneck_register_client.lua {key}:settings {key}:client_last_registered , {now_ms} hammer' \
--   --script-keys '{key}:settings {key}:client_last_registered' --script-args '{now_ms} hammer {cost}' \
--   --script-allowed 'reply[1] == 1'
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

if now >= last_refresh + interval then
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
