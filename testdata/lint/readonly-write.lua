#!lua flags=no-writes
-- A token-bucket "peek" meant for EVAL_RO that still refills the bucket:
-- Redis refuses HSET (and PEXPIRE) in a script flagged no-writes.
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(bucket[1]) or burst
local ts = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000))
return tokens
