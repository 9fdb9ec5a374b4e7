#!/usr/bin/env lua
-- A script kept runnable from a shell: Redis reads the first line as a Redis 7
-- shebang and refuses the engine (Unexpected engine in script shebang).
return redis.call('GET', KEYS[1])
