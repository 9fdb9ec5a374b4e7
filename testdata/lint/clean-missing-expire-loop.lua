-- A multi-key counter: every key in KEYS is incremented and each gets its TTL
-- in the same loop, so every written key is covered.
-- KEYS counters; ARGV window_ms.
local total = 0
for _, key in ipairs(KEYS) do
  total = total + redis.call('INCR', key)
  redis.call('PEXPIRE', key, ARGV[1])
end
return total
