-- In the style of a unique-jobs plugin for a Ruby job queue (digest locks
-- looked up across queues): KEYS[1] the digest's lock hash; ARGV[1] the
-- digest, ARGV[2] a page size. Written for this repository.
-- A found-flag does not bound a cursor loop: when the digest is nowhere, the
-- loop only ends once ZSCAN or SSCAN has walked the whole collection.
local digest = ARGV[1]
local page_size = tonumber(ARGV[2]) or 50

local function in_schedule(zset)
  local cursor = "0"
  local found = false
  repeat
    local page = redis.call("ZSCAN", zset, cursor, "MATCH", "*" .. digest .. "*", "COUNT", page_size)
    cursor = page[1]
    if #page[2] > 0 then
      found = true
    end
  until found == true or cursor == "0"
  return found
end

local cursor = 0
local done = false
repeat
  local page = redis.call("SSCAN", KEYS[1], cursor, "COUNT", page_size)
  cursor = page[1]
  for _, member in ipairs(page[2]) do
    if member == digest then done = true end
  end
until done or cursor == "0"

return in_schedule(KEYS[1])
