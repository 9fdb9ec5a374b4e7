-- TOO STRICT on purpose (limitctl must say so): gcra_server_time.lua (same flags), but a request
-- passes only once it is a whole spacing late (redis_rate's check written remaining < 1 instead
-- of remaining < 0): one token too few per burst. It reads TIME, so the hammer answers it with
-- each call's own time (--clock virtual).
--
-- KEYS[1]  the bucket
-- ARGV     burst, rate (requests per period), period in seconds, cost
--
-- limitctl hammer --limiter token-bucket --limit 20 --window 1s --script gcra_server_time.lua \
--   --script-args '{burst} {limit} {window_s} {cost}' --script-allowed 'reply[1] > 0'
redis.replicate_commands()

local bucket = KEYS[1]
local burst = tonumber(ARGV[1])
local per_period = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

-- Seconds since 2017-01-01 with microseconds: small enough that a double keeps them exact.
local clock = redis.call('TIME')
local now = (tonumber(clock[1]) - 1483228800) + tonumber(clock[2]) / 1e6

local spacing = period / per_period -- seconds between two requests at the steady rate
local stored = redis.call('GET', bucket)
local tat = now
if stored then
  tat = math.max(tonumber(stored), now)
end

local next_tat = tat + spacing * cost
local earliest = next_tat - spacing * burst
if now < earliest + spacing then -- THE BUG: one spacing too strict
  return {0, 0, tostring(earliest - now), tostring(tat - now)}
end

local reset_after = next_tat - now
redis.call('SET', bucket, string.format('%.6f', next_tat), 'EX', math.ceil(reset_after))
return {cost, math.floor((now - earliest) / spacing), '-1', tostring(reset_after)}
