-- A client made known to the limiter, in the calling style of Bottleneck's Redis datastore
-- `register_client` (written for limitctl's tests; no code copied): a limiter refuses to schedule
-- for a client it has not registered (an UNKNOWN_CLIENT error), so this runs after init.
--
-- KEYS  settings hash, client_last_registered zset
-- ARGV  now (ms), client id
--
-- limitctl hammer ... --script-setup-file \
--   'bottleneck_register_client.lua {key}:settings {key}:client_last_registered , {now_ms} hammer'
local timeout = tonumber(redis.call('hget', KEYS[1], 'timeout'))
if timeout == nil then
  return redis.error_reply('SETTINGS_KEY_NOT_FOUND')
end
redis.call('zadd', KEYS[2], tonumber(ARGV[1]), ARGV[2])
redis.call('pexpire', KEYS[2], timeout)
return {}
