-- A concurrency limit kept as numbered slot keys <name>1..<name>N, each held by a random id and
-- released by its owner or by its expiry, in the calling style of Laravel's
-- Illuminate\Redis\Limiters\ConcurrencyLimiter (written for limitctl's tests; no code copied).
--
-- KEYS  the slots <name>1..<name>N
-- ARGV  name, release after (s), holder id
-- reply the slot taken (<name><i>), or nil when every slot is held
local held = redis.call('MGET', unpack(KEYS))
for i = 1, #KEYS do
  if not held[i] then
    redis.call('SET', KEYS[i], ARGV[3], 'EX', ARGV[2])
    return ARGV[1] .. i
  end
end
return false
