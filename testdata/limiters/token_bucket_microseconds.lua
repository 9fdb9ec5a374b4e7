-- A token bucket told the time in microseconds and its rate per microsecond, in the calling style
-- of Traefik's Redis rate limiter (written here, not copied): KEYS the bucket {last, tokens}; ARGV
-- rate (tokens per microsecond), burst, now (microseconds), TTL (seconds), tokens requested.
-- Replies {ok, tokens left, delay in microseconds}. A caller whose now is older than the last
-- refill refills nothing and keeps the newest time (it is judged at that newest time).
--   limitctl hammer --limiter token-bucket --script testdata/limiters/token_bucket_microseconds.lua \
--     --script-args '{rate_per_s / 1000000} {burst} {now_us} {window_s * 2} {cost}'
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local requested = tonumber(ARGV[5])

local state = redis.call('HMGET', KEYS[1], 'last', 'tokens')
local last, tokens = tonumber(state[1]) or now, tonumber(state[2]) or burst
tokens = math.min(burst, tokens + math.max(0, now - last) * rate)
local ok, delay = 0, 0
if tokens >= requested then
  tokens = tokens - requested
  ok = 1
else
  delay = math.ceil((requested - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'last', string.format('%.0f', math.max(now, last)), 'tokens', tokens)
redis.call('EXPIRE', KEYS[1], math.ceil(ttl))
return {ok, math.floor(tokens), delay}
