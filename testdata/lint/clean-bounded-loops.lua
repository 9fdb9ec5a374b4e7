-- Loops a caller bounds: a while up to a count from ARGV that also stops on
-- an empty list, and a repeat that ends after at most max_moves moves.
-- KEYS[1] wait list, KEYS[2] active list; ARGV max_moves.
local max_moves = tonumber(ARGV[1])
local moved = 0
while moved < max_moves do
  local job = redis.call('RPOPLPUSH', KEYS[1], KEYS[2])
  if not job then break end
  moved = moved + 1
end
local n = 0
repeat
  local job = redis.call('LPOP', KEYS[2])
  n = n + 1
until not job or n >= max_moves
return moved
