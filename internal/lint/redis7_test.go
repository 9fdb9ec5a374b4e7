package lint

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

func TestShebang(t *testing.T) {
	runChecks(t, []check{
		{"a bare #!lua line parses and the script is checked",
			"#!lua\nreturn redis.call('GET', ARGV[1])", []string{"2:26 undeclared-key"}},
		{"known flags are accepted",
			"#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn redis.call('GET', KEYS[1])", nil},
		{"an empty flags= is accepted, as Redis does",
			"#!lua flags=\nreturn 1", nil},
		{"line numbers stay the user's after the shebang",
			"#!lua flags=allow-oom\n\ncount = 1", []string{"3:1 global-write"}},
		{"a CRLF shebang line",
			"#!lua flags=no-writes\r\nreturn redis.call('GET', KEYS[1])\r\n", nil},
		{"a shebang without a newline is the whole script",
			"#!lua", nil},
		{"EVAL's engine name is case-sensitive",
			"#!LUA\nreturn 1", []string{"1:1 shebang"}},
		{"a library's engine name is not",
			"#!LUA name=l\nredis.register_function('f', function() return 1 end)", nil},
		{"a trailing comma is an empty flag, which Redis refuses",
			"#!lua flags=no-writes,\nreturn 1", []string{"1:7 shebang"}},
		{"a tab separates words too",
			"#!lua\tflags=no-writes\nreturn redis.call('GET', KEYS[1])", nil},
		{"an unknown flag is refused",
			"#!lua flags=no-writes,readonly\nreturn 1", []string{"1:7 shebang"}},
		{"an engine other than lua is refused, and only that is said",
			"#!python flags=x\nreturn 1", []string{"1:1 shebang"}},
		{"an option other than flags= in an EVAL script is refused",
			"#!lua mode=fast\nreturn 1", []string{"1:7 shebang"}},
		{"a # line that is not a shebang is still a syntax error",
			"# comment\nreturn 1", []string{"1:1 syntax"}},
	})
}

func TestReadonlyWrite(t *testing.T) {
	runChecks(t, []check{
		{"a write in a no-writes script",
			"#!lua flags=no-writes\nredis.call('DEL', KEYS[1])", []string{"2:1 readonly-write"}},
		{"PUBLISH is refused in a no-writes script too",
			"#!lua flags=no-writes\nreturn redis.call('PUBLISH', 'events', ARGV[1])", []string{"2:8 readonly-write"}},
		{"reads in a no-writes script are fine",
			"#!lua flags=no-writes\nreturn {redis.call('GET', KEYS[1]), redis.call('ZCARD', KEYS[2])}", nil},
		{"a write without the flag is fine",
			"#!lua flags=allow-oom\nreturn redis.call('DEL', KEYS[1])", nil},
		{"a write through a helper called from a no-writes function",
			"#!lua name=l\nlocal function drop(k) return redis.call('DEL', k) end\n" +
				"redis.register_function{function_name='f', callback=function(keys) return drop(keys[1]) end, flags={'no-writes'}}",
			[]string{"3:75 readonly-write"}},
		{"a write in a function registered without the flag is fine",
			"#!lua name=l\nredis.register_function{function_name='f', callback=function(keys) return redis.call('DEL', keys[1]) end}", nil},
		{"a no-writes function that only reads is fine",
			"#!lua name=l\nredis.register_function{function_name='f', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}", nil},
	})
}

func TestLibrary(t *testing.T) {
	runChecks(t, []check{
		{"a registered function's parameters are KEYS and ARGV",
			"#!lua name=l\nredis.register_function('f', function(keys, args) return redis.call('GET', args[1]) end)",
			[]string{"2:76 undeclared-key"}},
		{"a named local function registered later gets KEYS and ARGV too",
			"#!lua name=l\nlocal function f(keys, args)\n  if args[1] < 5 then return 0 end\n  return redis.call('GET', keys[1])\nend\nredis.register_function('f', f)",
			[]string{"3:6 reply-type"}},
		{"the table form's callback",
			"#!lua name=l\nredis.register_function{function_name='f', callback=function(k, a) return redis.call('INCR', a[1]) end}",
			[]string{"2:94 missing-expire", "2:94 undeclared-key"}},
		{"each function is its own unit: a TTL in one does not cover another's key",
			"#!lua name=l\nredis.register_function('a', function(keys) redis.call('INCR', keys[1]) end)\n" +
				"redis.register_function('b', function(keys) redis.call('PEXPIRE', keys[1], 5) end)",
			[]string{"2:64 missing-expire"}},
		{"the KEYS global does not exist in a library",
			"#!lua name=l\nredis.register_function('f', function(keys) return redis.call('GET', KEYS[1]) end)",
			[]string{"2:70 library"}},
		{"redis.call at load time",
			"#!lua name=l\nlocal v = redis.call('PING')\nredis.register_function('f', function() return v end)",
			[]string{"2:11 library"}},
		{"a library that registers nothing",
			"#!lua name=l\nlocal function f() return 1 end", []string{"1:1 library"}},
		{"a library that registers its functions in a loop registers some",
			"#!lua name=l\nlocal names = {'a', 'b'}\nfor i = 1, #names do redis.register_function(names[i], function() return i end) end", nil},
		{"register_function outside a library",
			"redis.register_function('f', function() return 1 end)", []string{"1:1 library"}},
		{"server.register_function is Valkey's spelling",
			"#!lua name=l\nserver.register_function('f', function(keys) return server.call('GET', keys[1]) end)", nil},
		{"flags= in a library's shebang",
			"#!lua name=l flags=no-writes\nredis.register_function('f', function() return 1 end)", []string{"1:14 shebang"}},
		{"a library name Redis refuses",
			"#!lua name=my-lib\nredis.register_function('f', function() return 1 end)", []string{"1:7 shebang"}},
	})
}

func TestServerCall(t *testing.T) {
	runChecks(t, []check{
		{"server.call is redis.call",
			"return server.call('GET', ARGV[1])", []string{"1:27 undeclared-key"}},
		{"server.pcall is redis.pcall",
			"return server.pcall('KEYS', '*')", []string{"1:8 keys-command"}},
		{"a local named server is not Valkey's",
			"local server = {call = function() end}\nserver.call('GET', ARGV[1])", nil},
	})
}

func TestReplyType(t *testing.T) {
	runChecks(t, []check{
		{"an integer reply == ARGV is always false",
			"local n = redis.call('INCRBY', KEYS[1], ARGV[1])\nif n == ARGV[1] then redis.call('PEXPIRE', KEYS[1], 5) end", []string{"2:4 reply-type"}},
		{"ARGV == an integer reply, the reverse",
			"if ARGV[1] == redis.call('ZCARD', KEYS[1]) then end", []string{"1:4 reply-type"}},
		{"tonumber ~= ARGV is always true",
			"if tonumber(ARGV[1]) ~= ARGV[2] then end", []string{"1:4 reply-type"}},
		{"an integer reply == a string literal",
			"if redis.call('EXISTS', KEYS[1]) == '1' then end", []string{"1:4 reply-type"}},
		{"a GET reply ordered against a number raises",
			"local v = redis.call('GET', KEYS[1])\nif v and v > 10 then end", []string{"2:10 reply-type"}},
		{"reported at the line of the comparison, not of the assignment",
			"local n = redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], 1)\n\nreturn n == ARGV[1]", []string{"4:8 reply-type"}},
		{"a GET reply == ARGV is a string comparison",
			"return redis.call('GET', KEYS[1]) == ARGV[1]", nil},
		{"an integer reply == a number",
			"return redis.call('SCARD', KEYS[1]) == 1", nil},
		{"ZADD INCR replies with a string, compared with a string",
			"-- limitctl:ignore missing-expire\nreturn redis.call('ZADD', KEYS[1], 'INCR', 1, 'm') == ARGV[1]", nil},
		{"LPOP with a count replies with a table, not judged",
			"return redis.call('LPOP', KEYS[1], 2) == ARGV[1]", nil},
		{"a local that may hold either type is not judged",
			"local v = ARGV[1]\nif ARGV[2] then v = tonumber(v) end\nreturn v == ARGV[3]", nil},
		{"a reply of a command without a known reply type is not judged",
			"return redis.call('OBJECT', 'FREQ', KEYS[1]) == ARGV[1]", nil},
	})
}

func TestReplyKeyAndDataBoundLoops(t *testing.T) {
	runChecks(t, []check{
		{"a SCAN loop that deletes what it finds",
			"local c = '0'\nrepeat\n  local r = redis.call('SCAN', c)\n  c = r[1]\n  for _, k in ipairs(r[2]) do redis.call('DEL', k) end\nuntil c == '0'",
			[]string{"2:1 unbounded-loop", "5:49 reply-key"}},
		{"DEL of keys taken from a KEYS reply",
			"for _, k in ipairs(redis.call('KEYS', 'job:*')) do redis.call('DEL', k) end",
			[]string{"1:1 unbounded-loop", "1:20 keys-command", "1:70 reply-key"}},
		{"a while over a full LRANGE, as the for is",
			"local l = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal i = 1\nwhile i <= #l do redis.call('SREM', KEYS[2], l[i]) i = i + 1 end",
			[]string{"3:1 unbounded-loop"}},
		{"a while on a reply the body refreshes",
			"local job = redis.call('LPOP', KEYS[1])\nwhile job do redis.call('RPUSH', KEYS[2], job) job = redis.call('LPOP', KEYS[1]) end",
			[]string{"2:1 unbounded-loop", "2:34 missing-expire"}},
		{"a while bounded by a counter as well as the reply",
			"local n, job = 0, redis.call('LPOP', KEYS[1])\nwhile job and n < 10 do job = redis.call('LPOP', KEYS[1]) n = n + 1 end", nil},
		{"a repeat that ends on a counter or the reply",
			"local n = 0\nrepeat local job = redis.call('LPOP', KEYS[1]) n = n + 1 until not job or n >= 10", nil},
		{"a repeat that needs both the counter and the reply",
			"local n = 0\nrepeat local job = redis.call('LPOP', KEYS[1]) n = n + 1 until not job and n >= 10",
			[]string{"2:1 unbounded-loop"}},
		{"a loop on a reply that calls no Redis command is only Lua work",
			"local l = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal i = 1\nwhile i <= #l do i = i + 1 end", nil},
		{"a reply element used as a member is not a key",
			"local m = redis.call('ZRANGE', KEYS[1], 0, 0)\nredis.call('ZREM', KEYS[1], m[1])", nil},
		{"a for loop up to a number stored in Redis",
			"for i = 1, tonumber(redis.call('GET', KEYS[1])) do redis.call('LPOP', KEYS[2]) end", []string{"1:1 unbounded-loop"}},
		{"a for loop up to a capped number stored in Redis",
			"for i = 1, math.min(tonumber(redis.call('GET', KEYS[1])), 10) do redis.call('LPOP', KEYS[2]) end", nil},
		{"a for loop up to the length of a bounded reply",
			"local l = redis.call('ZRANGE', KEYS[1], 0, 9)\nfor i = 1, #l do redis.call('ZREM', KEYS[1], l[i]) end", nil},
		{"a while over a bounded reply",
			"local l = redis.call('LRANGE', KEYS[1], 0, 9)\nlocal i = 1\nwhile l[i] and i <= #l do redis.call('SREM', KEYS[2], l[i]) i = i + 1 end", nil},
		{"a while over a growing reply's elements",
			"local l = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal i = 1\nwhile l[i] do redis.call('SREM', KEYS[2], l[i]) i = i + 1 end", []string{"3:1 unbounded-loop"}},
		{"unpack(KEYS) is declared keys",
			"redis.call('DEL', unpack(KEYS))", nil},
		{"unpack of a reply is keys from a reply",
			"redis.call('DEL', unpack(redis.call('SMEMBERS', KEYS[1])))", []string{"1:19 reply-key"}},
	})
}

func TestMissingExpirePerKey(t *testing.T) {
	runChecks(t, []check{
		{"a TTL on a key from a reply does not silence the others",
			"redis.call('INCR', KEYS[1])\nlocal k = redis.call('GET', KEYS[2])\n-- limitctl:ignore reply-key\nredis.call('PEXPIRE', k, 5)",
			[]string{"1:20 missing-expire"}},
		{"a helper's TTL covers the key its caller passes",
			"local function ttl(k) redis.call('PEXPIRE', k, 5) end\nredis.call('INCR', KEYS[1])\nttl(KEYS[1])", nil},
		{"a helper's TTL covers only the key passed, not another",
			"local function ttl(k) redis.call('PEXPIRE', k, 5) end\nredis.call('INCR', KEYS[1])\nredis.call('INCR', KEYS[2])\nttl(KEYS[1])",
			[]string{"3:20 missing-expire"}},
		{"a helper that writes its parameter makes the caller's key written",
			"local function bump(k) return redis.call('INCR', k) end\nbump(KEYS[1])", []string{"2:6 missing-expire"}},
		{"a TTL on KEYS[i] could be any declared key",
			"redis.call('INCR', KEYS[1])\nfor i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], 5) end", nil},
		{"a TTL on KEYS[i] says nothing about a concatenated key",
			"-- limitctl:ignore undeclared-key\nredis.call('INCR', KEYS[1] .. ':n')\nfor i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], 5) end",
			[]string{"2:20 missing-expire"}},
		{"a TTL on a key the linter cannot name at all could be any key",
			"redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', cjson.decode(ARGV[1]).key, 5)", nil},
		{"a key that is one of two declared keys is covered by a TTL on either",
			"local k = KEYS[1]\nif ARGV[1] then k = KEYS[2] end\nredis.call('INCR', k)\nredis.call('PEXPIRE', KEYS[2], 5)", nil},
	})
}

func TestSuppressionCannotHideASyntaxError(t *testing.T) {
	runChecks(t, []check{
		{"an ignore comment before a syntax error",
			"-- limitctl:ignore syntax\nx = = 1", []string{"2:5 syntax"}},
	})
}

// Every command redis-server marks write must be refused by readonly-write,
// since Redis refuses them all in a no-writes script.
func TestReadonlyWriteKnowsEveryWriteCommandOfTheServer(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	infos, err := rdb.Command(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, info := range infos {
		if strings.Contains(name, "|") || !slices.Contains(info.Flags, "write") || slices.Contains(info.Flags, "noscript") {
			continue
		}
		checked++
		if !refusedInReadOnly[strings.ToUpper(name)] {
			t.Errorf("redis-server marks %s write, but readonly-write does not know it", name)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d write commands seen; is COMMAND answering?", checked)
	}
}

func TestReplyTypeIsNotGuessed(t *testing.T) {
	runChecks(t, []check{
		{"a pcall reply may be an error table",
			"return redis.pcall('SCARD', KEYS[1]) == ARGV[1]", nil},
		{"after redis.setresp replies change shape",
			"redis.setresp(3)\nreturn redis.call('SCARD', KEYS[1]) == ARGV[1]", nil},
		{"a count capped in a branch is bounded",
			"local l = redis.call('LRANGE', KEYS[1], 0, -1)\nlocal n = #l\nif n > 100 then n = 100 end\nfor i = 1, n do redis.call('SREM', KEYS[2], l[i]) end", nil},
	})
}
