-- A concurrency limit kept as one key per slot, in the calling style of Laravel's Redis
-- ConcurrencyLimiter (written here, not copied): KEYS are the slot keys name1 .. nameN (N is the
-- limit), ARGV[1] the name the slots share, ARGV[2] how long a slot is held at most (seconds),
-- ARGV[3] the request id. The reply is the slot taken (its key), or nothing when every slot is
-- held; the caller releases that slot by name, deleting it only while it still holds its id.
--   limitctl hammer --limiter concurrency --script testdata/limiters/concurrency_slots.lua \
--     --script-keys '{key}{slot}' --script-args '{key} {stale_after_s} {member}' \
--     --script-allowed 'reply ~= false' \
--     --script-release 'EVAL "if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) end return 0" 1 {reply} {member}'
local name = ARGV[1]
local hold_at_most = tonumber(ARGV[2])
local id = ARGV[3]

local held = redis.call('MGET', unpack(KEYS))
for slot = 1, #KEYS do
  if not held[slot] then
    redis.call('SET', KEYS[slot], id, 'EX', hold_at_most)
    return name .. slot
  end
end
return false
