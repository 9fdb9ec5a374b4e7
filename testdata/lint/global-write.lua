-- Every assignment to a name that is not a local creates a global, which
-- Redis refuses.
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
total = count

function bump(n)
  return n + 1
end

-- Fine: a local, a local function, a field of a local table, a parameter.
local seen = 0
seen = seen + 1
local function double(n)
  n = n * 2
  return n
end
local result = {}
result.count = double(count)
return result
