-- fixed_window_ttl_years: a window counter named by its window index whose TTL is computed from
-- an absolute time: PEXPIRE is given the window's end as a Unix time in milliseconds, where it
-- wants a duration, so every counter lives some 56 years (a leak; the limit still holds, since
-- each window has a key of its own).
--
-- limitctl hammer --limiter fixed-window --script fixed_window_ttl_years.lua \
--   --script-keys '{key}:{window_index}' --script-args '{limit} {window_ms} {window_start_ms}'
local counter = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local window_start = tonumber(ARGV[3])

local count = tonumber(redis.call('GET', counter) or '0')
if count >= limit then
  return {0, count}
end
count = redis.call('INCR', counter)
redis.call('PEXPIRE', counter, window_start + 2 * window)
return {1, count}
