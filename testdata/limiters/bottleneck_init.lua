-- A limiter's settings created once, in the calling style of Bottleneck's Redis datastore `init`
-- (written for limitctl's tests; no code copied): the settings hash is written from ARGV's
-- field/value pairs after now and a clear flag, the reservoir's refresh anchored at now, and
-- every key of the limiter given the datastore's TTL (Bottleneck's `timeout` option).
--
-- KEYS  settings hash, client_last_registered zset
-- ARGV  now (ms), clear (1 drops existing state), then field value ... (reservoir,
--       reservoirRefreshInterval, reservoirRefreshAmount, minTime, timeout)
--
-- limitctl hammer ... --script-setup-file \
--   'bottleneck_init.lua {key}:settings {key}:client_last_registered , {now_ms} 0 reservoir {limit} reservoirRefreshInterval {window_ms} reservoirRefreshAmount {limit} minTime 0 timeout 600000'
local settings_key = KEYS[1]
local now = tonumber(ARGV[1])
local clear = tonumber(ARGV[2])

if clear == 1 then
  redis.call('del', unpack(KEYS))
end
if redis.call('exists', settings_key) == 0 then
  local fields = {}
  for i = 3, #ARGV do
    table.insert(fields, ARGV[i])
  end
  redis.call('hmset', settings_key, unpack(fields))
  redis.call('hmset', settings_key, 'lastReservoirRefresh', now, 'nextRequest', now, 'running', 0, 'done', 0)
end
local timeout = tonumber(redis.call('hget', settings_key, 'timeout'))
for _, key in ipairs(KEYS) do
  redis.call('pexpire', key, timeout)
end
return {}
