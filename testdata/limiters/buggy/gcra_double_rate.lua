-- BUGGY on purpose: gcra_server_time.lua with the spacing between requests halved, so it admits
-- twice its rate. limitctl must catch it (same flags as gcra_server_time.lua).
redis.replicate_commands()

local bucket = KEYS[1]
local burst = tonumber(ARGV[1])
local per_period = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

-- Seconds since 2017-01-01 with microseconds: small enough that a double keeps them exact.
local clock = redis.call('TIME')
local now = (tonumber(clock[1]) - 1483228800) + tonumber(clock[2]) / 1e6

local spacing = period / per_period / 2 -- THE BUG: half the spacing, twice the rate
local stored = redis.call('GET', bucket)
local tat = now
if stored then
  tat = math.max(tonumber(stored), now)
end

local next_tat = tat + spacing * cost
local earliest = next_tat - spacing * burst
if now < earliest then
  return {0, 0, tostring(earliest - now), tostring(tat - now)}
end

local reset_after = next_tat - now
redis.call('SET', bucket, string.format('%.6f', next_tat), 'EX', math.ceil(reset_after))
return {cost, math.floor((now - earliest) / spacing), '-1', tostring(reset_after)}
