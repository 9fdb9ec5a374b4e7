package lint

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// check is one behaviour: a script and what it must report, as
// "line:col rule" (nil: nothing).
type check struct {
	name string
	src  string
	want []string
}

func brief(ds []Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%d:%d %s", d.Line, d.Col, d.Rule))
	}
	return out
}

func runChecks(t *testing.T, checks []check) {
	t.Helper()
	for _, tt := range checks {
		t.Run(tt.name, func(t *testing.T) {
			ds := Lint("t.lua", []byte(tt.src))
			if got := brief(ds); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q\nscript:\n%s\ndiagnostics:\n%s", got, tt.want, tt.src, formatAll(ds))
			}
		})
	}
}

func TestSyntax(t *testing.T) {
	runChecks(t, []check{
		{"a file that does not parse gets one syntax error and no other checks",
			"x = = 1\ny = 2\n", []string{"1:5 syntax"}},
		{"an unclosed block is reported just past the last non-blank character",
			"if ARGV[1] then\n  redis.call('GET', KEYS[1])\n\n", []string{"2:29 syntax"}},
		{"an invalid token is reported where it is",
			"local a = 1\nlocal b = a ~ 2\n", []string{"2:13 syntax"}},
		{"an empty file parses", "", nil},
	})
}

func TestGlobalWrite(t *testing.T) {
	runChecks(t, []check{
		{"assigning an undeclared name writes a global",
			"count = 1", []string{"1:1 global-write"}},
		{"every global in a multiple assignment is reported",
			"local a\na, b, c = 1, 2, 3", []string{"2:4 global-write", "2:7 global-write"}},
		{"function foo() declares a global function",
			"function foo() end", []string{"1:10 global-write"}},
		{"assigning a declared local is fine",
			"local x\nx = 1", nil},
		{"assigning a parameter is fine",
			"local function f(n) n = n + 1 return n end", nil},
		{"assigning a field of a local table is fine",
			"local t = {}\nt.x = 1\nfunction t.f() end", nil},
		{"a local declared in an inner block does not cover code after it",
			"do local x = 1 end\nx = 2", []string{"2:1 global-write"}},
		{"a method's implicit self is a local",
			"local obj = {}\nfunction obj:set(v) self = v end", nil},
		{"the until condition of repeat sees the body's locals",
			"repeat local done = true until done", nil},
	})
}

func TestUndeclaredKey(t *testing.T) {
	runChecks(t, []check{
		{"KEYS[1] is a declared key",
			"return redis.call('GET', KEYS[1])", nil},
		{"a local alias of KEYS[1] is a declared key",
			"local key = KEYS[1]\nreturn redis.call('GET', key)", nil},
		{"an alias of an alias of KEYS[1] is a declared key",
			"local a = KEYS[1]\nlocal b = a\nreturn redis.call('GET', b)", nil},
		{"an index into an alias of KEYS is a declared key",
			"local keys = KEYS\nreturn redis.call('GET', keys[2])", nil},
		{"the values of ipairs(KEYS) are declared keys",
			"for _, key in ipairs(KEYS) do redis.call('DEL', key) end", nil},
		{"the values of a list of KEYS entries are declared keys",
			"local keys = {KEYS[1], KEYS[3]}\nfor _, key in ipairs(keys) do redis.call('DEL', key) end\nreturn redis.call('GET', keys[2])", nil},
		{"a list mixing KEYS and ARGV is not a list of keys",
			"local keys = {KEYS[1], ARGV[1]}\nfor _, key in ipairs(keys) do redis.call('DEL', key) end",
			[]string{"2:49 undeclared-key"}},
		{"KEYS[i] in a numeric loop is a declared key",
			"for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end", nil},
		{"a key from ARGV is not declared",
			"return redis.call('GET', ARGV[1])", []string{"1:26 undeclared-key"}},
		{"a local assigned from ARGV is not declared",
			"local key = ARGV[1]\nreturn redis.call('GET', key)", []string{"2:26 undeclared-key"}},
		{"KEYS[1] .. ':x' names a new key",
			"return redis.call('GET', KEYS[1] .. ':x')", []string{"1:26 undeclared-key"}},
		{"a concatenation stored in a local names a new key",
			"local key = 'rate:' .. KEYS[1]\nreturn redis.call('GET', key)", []string{"2:26 undeclared-key"}},
		{"a loop variable over a reply is a key from a reply",
			"for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, 9)) do\n  redis.call('DEL', k)\nend",
			[]string{"2:21 reply-key"}},
		{"a numeric loop variable is not a declared key",
			"for i = 1, 3 do redis.call('DEL', i) end", []string{"1:35 undeclared-key"}},
		{"a string literal key is hard-coded",
			"return redis.call('GET', 'config')", []string{"1:26 undeclared-key"}},
		{"the command name is case-insensitive",
			"return redis.call('get', ARGV[1])", []string{"1:26 undeclared-key"}},
		{"redis.pcall is checked like redis.call",
			"return redis.pcall('GET', ARGV[1])", []string{"1:27 undeclared-key"}},
		{"only key positions are checked: SET's value may come from ARGV",
			"redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])", nil},
		{"DEL checks every argument",
			"redis.call('DEL', KEYS[1], ARGV[1], KEYS[2])", []string{"1:28 undeclared-key"}},
		{"MSET checks every other argument, the keys",
			"redis.call('MSET', KEYS[1], ARGV[1], ARGV[2], ARGV[3])\nredis.call('PEXPIRE', KEYS[1], 1)\nredis.call('PEXPIRE', ARGV[2], 1)",
			[]string{"1:38 undeclared-key", "3:23 undeclared-key"}},
		{"RENAME checks both keys",
			"redis.call('RENAME', ARGV[1], ARGV[2])", []string{"1:22 undeclared-key", "1:31 undeclared-key"}},
		{"an unknown command is not guessed at",
			"return redis.call('OBJECT', 'FREQ', ARGV[1])", nil},
		{"a computed command name is not guessed at",
			"return redis.call(ARGV[1], ARGV[2])", nil},
		{"a reply used as a key is a key from a reply",
			"return redis.call('GET', redis.call('GET', KEYS[1]))", []string{"1:26 reply-key"}},
		{"a call result of a function the linter does not follow is not guessed at",
			"return redis.call('GET', cjson.decode(KEYS[1]))", nil},
		{"a function parameter used as a key is not guessed at",
			"local function get(k) return redis.call('GET', k) end\nreturn get(ARGV[1])", nil},
		{"a local named redis is not Redis",
			"local redis = {call = function() end}\nredis.call('GET', ARGV[1])", nil},
		{"a local named KEYS is not the KEYS table",
			"local KEYS = {ARGV[1]}\nreturn redis.call('GET', KEYS[1])", nil},
		{"a call through a local alias of redis.call is checked",
			"local call = redis.call\nreturn call('GET', ARGV[1])", []string{"2:20 undeclared-key"}},
	})
}

func TestKeysCommand(t *testing.T) {
	runChecks(t, []check{
		{"the KEYS command inside a script blocks the server",
			"return redis.call('KEYS', 'rate:*')", []string{"1:8 keys-command"}},
		{"the KEYS command is found whatever its case",
			"return redis.pcall('keys', ARGV[1])", []string{"1:8 keys-command"}},
		{"the KEYS table is not the KEYS command",
			"return redis.call('EXISTS', KEYS[1])", nil},
	})
}

func TestNondeterministic(t *testing.T) {
	runChecks(t, []check{
		{"TIME reads the server clock",
			"local now = redis.call('TIME')\nreturn now[1]", []string{"1:13 nondeterministic"}},
		{"TIME used only for logging is still warned",
			"local t = redis.call('TIME')\nredis.log(redis.LOG_NOTICE, 'at ' .. t[1])\nreturn 1",
			[]string{"1:11 nondeterministic"}},
		{"RANDOMKEY is random",
			"return redis.call('RANDOMKEY')", []string{"1:8 nondeterministic"}},
		{"SRANDMEMBER is random",
			"return redis.call('SRANDMEMBER', KEYS[1])", []string{"1:8 nondeterministic"}},
		{"SPOP is random",
			"return redis.call('SPOP', KEYS[1])", []string{"1:8 nondeterministic"}},
		{"math.random is random",
			"return math.random(10)", []string{"1:8 nondeterministic"}},
		{"math.random taken into a local is reported where it is taken",
			"local pick = math.random\nreturn pick(10)", []string{"1:14 nondeterministic"}},
		{"time passed in ARGV is the fix",
			"local now = tonumber(ARGV[1])\nreturn now", nil},
	})
	ds := Lint("t.lua", []byte("return redis.call('TIME')"))
	for _, phrase := range []string{"pass the time in ARGV", "effects replication", "Redis >= 5", "safe to replicate", "cannot reason about one clock", "tests cannot inject it"} {
		if !strings.Contains(ds[0].Message, phrase) {
			t.Errorf("TIME message %q does not say %q", ds[0].Message, phrase)
		}
	}
}

func TestMissingExpire(t *testing.T) {
	runChecks(t, []check{
		{"INCR without any TTL leaks the key",
			"return redis.call('INCR', KEYS[1])", []string{"1:27 missing-expire"}},
		{"INCR then PEXPIRE on the same key is fine",
			"redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], ARGV[1])", nil},
		{"a TTL set before the write counts too",
			"redis.call('EXPIRE', KEYS[1], 5)\nredis.call('HSET', KEYS[1], 'f', 1)", nil},
		{"a TTL through a local alias covers KEYS[1]",
			"local key = KEYS[1]\nredis.call('ZADD', KEYS[1], 1, 'm')\nredis.call('PEXPIRE', key, 1000)", nil},
		{"a TTL on another key does not count",
			"redis.call('SADD', KEYS[1], 'm')\nredis.call('EXPIRE', KEYS[2], 5)", []string{"1:20 missing-expire"}},
		{"SET without options leaks the key",
			"redis.call('SET', KEYS[1], ARGV[1])", []string{"1:19 missing-expire"}},
		{"SET ... PX carries its TTL",
			"redis.call('SET', KEYS[1], ARGV[1], 'PX', 100)", nil},
		{"SET options are case-insensitive",
			"redis.call('SET', KEYS[1], ARGV[1], 'nx', 'ex', 10)", nil},
		{"SET ... KEEPTTL keeps the TTL the key has",
			"redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')", nil},
		{"SETEX writes with a TTL",
			"redis.call('SETEX', KEYS[1], 10, ARGV[1])", nil},
		{"SET with an option the linter cannot read is not guessed at",
			"redis.call('SET', KEYS[1], ARGV[1], ARGV[2], ARGV[3])", nil},
		{"a key is reported once, at its first write",
			"redis.call('INCR', KEYS[1])\nredis.call('INCRBY', KEYS[1], 2)", []string{"1:20 missing-expire"}},
		{"a TTL given to a key the linter cannot name silences the rule",
			"local function touch(k) redis.call('PEXPIRE', k, 10) end\nredis.call('INCR', KEYS[1])\ntouch(KEYS[1])", nil},
		{"concatenated keys are matched by their resolved text",
			"local k = KEYS[1] .. ':n'\nredis.call('INCR', k)\nredis.call('EXPIRE', KEYS[1] .. ':n', 5)",
			[]string{"2:20 undeclared-key", "3:22 undeclared-key"}},
		{"reads and deletes need no TTL",
			"redis.call('GET', KEYS[1])\nredis.call('DEL', KEYS[1])\nredis.call('ZREM', KEYS[2], 'm')", nil},
	})
}

func TestUnboundedLoop(t *testing.T) {
	runChecks(t, []check{
		{"while true around redis.call",
			"while true do\n  if not redis.call('LPOP', KEYS[1]) then break end\nend", []string{"1:1 unbounded-loop"}},
		{"while with another constant truthy condition",
			"while 1 do redis.call('LPOP', KEYS[1]) break end", []string{"1:1 unbounded-loop"}},
		{"repeat until false around redis.call",
			"repeat redis.call('LPOP', KEYS[1]) until false", []string{"1:1 unbounded-loop"}},
		{"repeat until nil around redis.call",
			"repeat redis.call('LPOP', KEYS[1]) until nil", []string{"1:1 unbounded-loop"}},
		{"a constant loop that makes no Redis call is not about Redis",
			"local n = 0\nwhile true do n = n + 1 if n > 3 then break end end", nil},
		{"while with a real condition is fine",
			"local n = 0\nwhile n < 3 do redis.call('LPOP', KEYS[1]) n = n + 1 end", nil},
		{"repeat until true runs once",
			"repeat redis.call('LPOP', KEYS[1]) until true", nil},
		{"a loop over ZRANGE 0 -1 calling redis.call",
			"for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('ZREM', KEYS[1], m) end",
			[]string{"1:1 unbounded-loop"}},
		{"a loop over a local holding SMEMBERS calling redis.call",
			"local ms = redis.call('SMEMBERS', KEYS[1])\nfor _, m in pairs(ms) do redis.call('SREM', KEYS[1], m) end",
			[]string{"2:1 unbounded-loop"}},
		{"a numeric loop up to #reply of HGETALL",
			"local h = redis.call('HGETALL', KEYS[1])\nfor i = 1, #h, 2 do redis.call('HDEL', KEYS[1], h[i]) end",
			[]string{"2:1 unbounded-loop"}},
		{"a numeric loop up to the length of a growing reply taken directly",
			"for i = 1, #redis.call('LRANGE', KEYS[1], 0, -1) do redis.call('RPOP', KEYS[1]) end",
			[]string{"1:1 unbounded-loop"}},
		{"a numeric loop up to a count derived from a growing reply",
			"local ms = redis.call('SMEMBERS', KEYS[1])\nlocal n = #ms - 1\nfor i = 1, n do redis.call('SPOP', KEYS[1]) end",
			[]string{"3:1 unbounded-loop", "3:17 nondeterministic"}},
		{"a count capped with math.min is bounded",
			"local ms = redis.call('SMEMBERS', KEYS[1])\nfor i = 1, math.min(#ms, 100) do redis.call('SREM', KEYS[1], ms[i]) end", nil},
		{"a numeric loop up to ZCARD",
			"for i = 1, redis.call('ZCARD', KEYS[1]) do redis.call('ZPOPMIN', KEYS[1]) end",
			[]string{"1:1 unbounded-loop"}},
		{"ZRANGEBYSCORE without LIMIT grows",
			"for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[1])) do redis.call('ZREM', KEYS[1], m) end",
			[]string{"1:1 unbounded-loop"}},
		{"ZRANGE BYSCORE without LIMIT grows",
			"for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, ARGV[1], 'BYSCORE')) do redis.call('ZREM', KEYS[1], m) end",
			[]string{"1:1 unbounded-loop"}},
		{"ZRANGE 0 99 is bounded",
			"for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, 99)) do redis.call('ZREM', KEYS[1], m) end", nil},
		{"LRANGE -10 -1 is bounded",
			"for _, m in ipairs(redis.call('LRANGE', KEYS[1], -10, -1)) do redis.call('SREM', KEYS[2], m) end", nil},
		{"ZRANGEBYSCORE with LIMIT is bounded",
			"for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], 0, 5, 'LIMIT', 0, 10)) do redis.call('ZREM', KEYS[1], m) end", nil},
		{"a call that is not ipairs or pairs in a for is still checked",
			"for k in redis.call('KEYS', '*') do end", []string{"1:10 keys-command"}},
		{"a local named ipairs is not Lua's",
			"local function ipairs(t) return next, t end\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do redis.call('DEL', KEYS[1]) end", nil},
		{"a loop over a growing reply that makes no Redis call is only Lua work",
			"local n = 0\nfor _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do n = n + 1 end\nreturn n", nil},
	})
}

func TestArgvNumber(t *testing.T) {
	runChecks(t, []check{
		{"ARGV in arithmetic",
			"return ARGV[1] + 1", []string{"1:8 argv-number"}},
		{"ARGV on the right of arithmetic",
			"return 10 * ARGV[2]", []string{"1:13 argv-number"}},
		{"ARGV in an ordering comparison with a value of unknown type",
			"local function f(x) return ARGV[1] < x end", []string{"1:28 argv-number"}},
		{"ARGV in an ordering comparison with a number is a certain error",
			"return ARGV[1] < 10", []string{"1:8 reply-type"}},
		{"both sides of a comparison are reported",
			"return ARGV[1] >= ARGV[2]", []string{"1:8 argv-number", "1:19 argv-number"}},
		{"a local assigned from ARGV and compared with a number",
			"local limit = ARGV[1]\nreturn 5 > limit", []string{"2:8 reply-type"}},
		{"unary minus on ARGV",
			"return -ARGV[1]", []string{"1:9 argv-number"}},
		{"tonumber(ARGV[1]) stored in a local then compared is fine",
			"local limit = tonumber(ARGV[1])\nreturn 5 > limit", nil},
		{"tonumber(ARGV[1]) with a default is still a number",
			"local limit = tonumber(ARGV[1]) or 10\nreturn limit - 1", nil},
		{"equality is not an ordering comparison",
			"return ARGV[1] == '1'", nil},
		{"concatenation is not arithmetic",
			"return 'n=' .. ARGV[1]", nil},
		{"the values of ipairs(ARGV) are still strings",
			"local sum = 0\nfor _, a in ipairs(ARGV) do sum = sum + a end\nreturn sum", []string{"2:41 argv-number"}},
	})
}

func TestColumns(t *testing.T) {
	runChecks(t, []check{
		{"two ARGV on one line get their own columns",
			"if ARGV[1] < ARGV[2] then end", []string{"1:4 argv-number", "1:14 argv-number"}},
		{"a tab counts as one column",
			"\tcount = 1", []string{"1:2 global-write"}},
		{"an argument on a continuation line is reported on its own line",
			"redis.call('GET',\n    ARGV[1])", []string{"2:5 undeclared-key"}},
		{"a field with the same name does not take the name's column",
			"local t = {ARGV = 1}\nif t.ARGV < ARGV[1] then end", []string{"2:13 argv-number"}},
		{"a string with the same text does not take the name's column",
			"local s = 'ARGV' if ARGV[1] > s then end", []string{"1:21 argv-number"}},
		{"CRLF line endings count one line each",
			"local a = 1\r\nlocal b = 2\r\ncount = 3\r\n", []string{"3:1 global-write"}},
		{"a name the parser moved to its parenthesis' line falls back to that line's first non-blank column",
			"  local n = (\nARGV)[1] + 1\nreturn ARGV[2] + n", []string{"1:3 argv-number", "3:8 argv-number"}},
	})
}

func TestSuppression(t *testing.T) {
	runChecks(t, []check{
		{"an ignore comment silences the named rule on the next line",
			"-- limitctl:ignore global-write\ncount = 1", nil},
		{"it does not reach two lines down",
			"-- limitctl:ignore global-write\n\ncount = 1", []string{"3:1 global-write"}},
		{"other rules on that line still report",
			"-- limitctl:ignore missing-expire\nredis.call('INCR', ARGV[1])", []string{"2:20 undeclared-key"}},
		{"several rules may be named, comma or space separated",
			"-- limitctl:ignore missing-expire, undeclared-key\nredis.call('INCR', ARGV[1])\n-- limitctl:ignore undeclared-key missing-expire\nredis.call('INCR', ARGV[2])", nil},
		{"a reason may follow after --",
			"  -- limitctl:ignore nondeterministic -- only logged\nlocal t = redis.call('TIME')", nil},
		{"a comment after code is not a directive",
			"local x = 1 -- limitctl:ignore global-write\ncount = x", []string{"2:1 global-write"}},
		{"an unknown rule name silences nothing",
			"-- limitctl:ignore global\ncount = 1", []string{"2:1 global-write"}},
	})
}
