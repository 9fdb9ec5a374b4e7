-- A lock extension assembled from string pieces, as Java and C# clients
-- build their scripts, where two pieces both end in ';'. Written for this
-- repository. Lua 5.2 allows the empty statement ';;', but Redis runs Lua
-- 5.1, which refuses it. KEYS[1] lock; ARGV[1] token, ARGV[2] ttl_ms.
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]);; return 1; end; return 0;
