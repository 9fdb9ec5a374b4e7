-- In the style of a unique-jobs plugin for a Ruby job queue: the same digest
-- lookups as unbounded-loop-flag.lua, each also capped by a page counter, so
-- a script never walks more than max_pages pages. Written for this repository.
-- KEYS[1] the digest's lock set, KEYS[2] the retry list; ARGV[1] the digest, ARGV[2] a page size,
-- ARGV[3] the most pages one call may read.
local digest = ARGV[1]
local page_size = tonumber(ARGV[2]) or 50
local max_pages = tonumber(ARGV[3]) or 20

local cursor = "0"
local found = false
local pages = 0
repeat
  local page = redis.call("SSCAN", KEYS[1], cursor, "MATCH", "*" .. digest .. "*", "COUNT", page_size)
  cursor = page[1]
  pages = pages + 1
  if #page[2] > 0 then found = true end
until found or cursor == "0" or pages >= max_pages

local seen = 0
while not found and seen < max_pages do
  local member = redis.call("LINDEX", KEYS[2], seen)
  seen = seen + 1
  if member == digest then found = true end
end
return found and 1 or 0
