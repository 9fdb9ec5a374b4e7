-- Comparisons that are right: like types on both sides.
-- KEYS[1] lock, KEYS[2] counter; ARGV token, window_ms, limit.
-- Lock release: a GET reply (a string) against ARGV (a string).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
-- A counter reply against a number literal, and against tonumber(ARGV).
local count = redis.call('INCR', KEYS[2])
if count == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
local limit = tonumber(ARGV[3])
if count > limit or count == tonumber(ARGV[3]) then
  return 0
end
-- A GET reply converted first.
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
if stored >= limit then
  return 0
end
-- A local that holds a string on one path and a number on another is not
-- judged: either could reach the comparison.
local threshold = ARGV[3]
if ARGV[4] == 'numeric' then
  threshold = tonumber(threshold)
end
if threshold == count then
  return 2
end
return 1
