-- A limiter with a counter and a penalty box: a helper gives the counter its
-- TTL, and a TTL on a key read from a reply says nothing about KEYS[2].
-- KEYS[1] counter, KEYS[2] penalty set, KEYS[3] last-offender pointer;
-- ARGV window_ms, client id.
local function expire_later(key, ttl_ms)
  redis.call('PEXPIRE', key, ttl_ms)
end
local count = redis.call('INCR', KEYS[1])
expire_later(KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
local last = redis.call('GET', KEYS[3])
if last then
  -- limitctl:ignore reply-key -- the offender keys share the limiter's {hash tag}
  redis.call('PEXPIRE', last, ARGV[1])
end
return count
