-- Reply values used as members and fields, never as keys: a sliding-window
-- log trimmed in bounded steps. KEYS[1] log, KEYS[2] owners hash; ARGV now_ms,
-- window_ms.
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window, 'LIMIT', 0, 100)
for _, member in ipairs(expired) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[2], member)
end
redis.call('PEXPIRE', KEYS[1], window)
redis.call('PEXPIRE', KEYS[2], window)
redis.call('DEL', unpack(KEYS))
return #expired
