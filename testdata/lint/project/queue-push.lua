-- Push a job: KEYS[1] id counter, KEYS[2] job hash, KEYS[3] wait list,
-- KEYS[4] events stream; ARGV name, payload, max_events.
local id = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 'name', ARGV[1], 'data', ARGV[2])
redis.call('RPUSH', KEYS[3], id)
local events = redis.call('XADD', KEYS[4], '*', 'event', 'waiting', 'id', id)
-- The queue's bug: XLEN replies with a number, ARGV[3] is a string.
if redis.call('XLEN', KEYS[4]) == ARGV[3] then
  redis.call('XTRIM', KEYS[4], 'MAXLEN', ARGV[3])
end
return {id, events}
