-- The same checks apply to Valkey's server.call and server.pcall.
local count = server.call('INCR', 'rl:' .. ARGV[1])
server.pcall('SET', ARGV[2], count)
return count
