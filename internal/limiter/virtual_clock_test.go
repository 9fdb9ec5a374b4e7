package limiter_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The virtual clock's wrapper answers TIME however a script reaches it, and changes nothing
// else: each script runs raw and wrapped on one server, and every reply and every error must be
// the same, but for the script's SHA1 in error messages (which the strategy puts back).
func TestVirtualClockChangesNothingButTime(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	key := keyFor(t)
	cases := []struct{ name, src string }{
		{"reply types", "return {1, 'two', false, {3, {4}}, redis.call('GET', KEYS[1])}"},
		{"status reply", "return redis.status_reply('FINE')"},
		{"error reply", "return redis.error_reply('MY own error')"},
		{"error table", "return {err = 'MY table error'}"},
		{"keys and argv", "return {#KEYS, KEYS[1], #ARGV, ARGV[1], ARGV[2], ARGV[3]}"},
		{"ipairs of argv", "local n = 0 for _ in ipairs(ARGV) do n = n + 1 end return n"},
		{"failed call on a later line", "local x = 1\nlocal y = redis.call('INCR')\nreturn y"},
		{"failed call as a tail call", "local x = 1\nreturn redis.call('NOSUCH')"},
		{"failed call through an alias", "local c = redis.call\nlocal x = 1\nreturn c('NOSUCH', KEYS[1])"},
		{"pcall answers the error", "local x = 1\nlocal e = redis.pcall('INCR')\nreturn e"},
		{"pcall as a tail call", "return redis.pcall('INCR')"},
		{"caught and called again", "local c = redis.call\nlocal ok, e = pcall(c, 'INCR')\nreturn {tostring(ok), e, c('SET', KEYS[1], 'v', 'PX', 1000)}"},
		{"caught by pcall(redis.call)", "local ok, e = pcall(redis.call, 'INCR')\nreturn {tostring(ok), type(e), e}"},
		{"bad argument", "return redis.call('SET', KEYS[1], {})"},
		{"no argument", "return redis.call()"},
		{"runtime error", "local x = nil\nreturn x + 1"},
		{"error()", "local x = 1\nerror('boom')"},
		{"global write", "x = 1"},
		{"nil reply", "return redis.call('GET', KEYS[1] .. ':none') == false"},
		{"resp3", "redis.setresp(3)\nredis.call('HSET', KEYS[1] .. ':h', 'f', '1')\nredis.call('PEXPIRE', KEYS[1] .. ':h', 1000)\nreturn redis.call('HGETALL', KEYS[1] .. ':h')"},
		{"helpers", "return {redis.sha1hex('x'), redis.REDIS_VERSION ~= nil, type(redis.log)}"},
		{"a command named like time", "return redis.pcall('TIMEX')"},
		{"TIME with an argument", "return redis.pcall('TIME', 'x')"},
		{"shebang", "#!lua flags=no-writes\nlocal x = 1\nreturn redis.call('NOSUCH')"},
		{"shebang write refused", "#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 1)"},
		{"first line is a comment", "-- a comment\nreturn 1"},
		{"first line opens a parenthesis", "(function() end)()\nreturn 2"},
		{"compile error", "local x = = 1\nreturn x"},
		{"names server without calling it", "if false then return server.call('TIME') end\nreturn redis.call('PING')"},
	}
	args := []any{"a", "", "c d"}
	normal := func(s string) string { return regexp.MustCompile(`[0-9a-f]{40}`).ReplaceAllString(s, "SHA") }
	for _, c := range cases {
		for _, marked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/marked=%v", c.name, marked), func(t *testing.T) {
				rawReply, rawErr := rdb.Eval(ctx, c.src, []string{key}, args...).Result()
				wrapped := limiter.VirtualClockSource(c.src)
				keys, extra := []string{key}, []any{"", "1700000000", "42"}
				if marked {
					keys, extra[0] = append(keys, limiter.TimeKey(key)), "1"
				}
				gotReply, gotErr := rdb.Eval(ctx, wrapped, keys, append(args[:len(args):len(args)], extra...)...).Result()
				if fmt.Sprint(rawReply) != fmt.Sprint(gotReply) {
					t.Errorf("reply %#v, raw %#v", gotReply, rawReply)
				}
				if normal(fmt.Sprint(rawErr)) != normal(fmt.Sprint(gotErr)) {
					t.Errorf("error\n  %v\nraw\n  %v", gotErr, rawErr)
				}
				if strings.Count(wrapped, "\n") != strings.Count(c.src, "\n") {
					t.Errorf("the wrapper adds lines: %d, the script has %d", strings.Count(wrapped, "\n"), strings.Count(c.src, "\n"))
				}
			})
		}
	}
}

// With the key's mark, TIME never goes back: a call stamped before the mark is answered the
// mark, every TIME of one call answers the same, the mark is stored with a finite TTL, and the
// script sees neither the mark's key nor the extra ARGV. A read-only script reads the mark and
// stores none; a script given no KEYS has the mark as its only (hidden) key.
func TestVirtualClockTimeNeverGoesBack(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	key := keyFor(t)
	mark := limiter.TimeKey(key)
	src := "local a = redis.call('TIME') local b = redis.pcall('time') " +
		"return {a[1], a[2], tostring(a[1] == b[1] and a[2] == b[2]), #KEYS, #ARGV, KEYS[#KEYS]}"
	call := func(src string, keys []string, sec, usec string) string {
		t.Helper()
		reply, err := rdb.Eval(ctx, limiter.VirtualClockSource(src), append(keys, mark), "x", "1", sec, usec).Result()
		if err != nil {
			t.Fatalf("%s.%s: %v", sec, usec, err)
		}
		return fmt.Sprint(reply)
	}
	if got := call(src, []string{key}, "1700000100", "000250"); got != "[1700000100 250 true 1 1 "+key+"]" {
		t.Fatalf("first call answered %s", got)
	}
	if got := call(src, []string{key}, "1700000099", "999999"); got != "[1700000100 250 true 1 1 "+key+"]" {
		t.Errorf("a call stamped before the mark answered %s, want the mark 1700000100.000250", got)
	}
	if got := call(src, []string{key}, "1700000101", "7"); got != "[1700000101 7 true 1 1 "+key+"]" {
		t.Errorf("a later call answered %s, want its own stamp", got)
	}
	if got := rdb.Get(ctx, mark).Val(); got != "1700000101000007" {
		t.Errorf("mark %q, want 1700000101000007 µs", got)
	}
	if ttl := rdb.PTTL(ctx, mark).Val(); ttl <= 0 || ttl > 5*time.Minute {
		t.Errorf("the mark's TTL is %s, want a finite one of at most 5m", ttl)
	}
	readOnly := "#!lua flags=no-writes\nlocal a = redis.call('TIME') return {a[1], a[2]}"
	if got := call(readOnly, []string{key}, "1700000050", "0"); got != "[1700000101 7]" {
		t.Errorf("a read-only script answered %s, want the mark", got)
	}
	if got := call(readOnly, []string{key}, "1700000200", "0"); got != "[1700000200 0]" || rdb.Get(ctx, mark).Val() != "1700000101000007" {
		t.Errorf("a read-only script answered %s and left the mark at %s: it may not store it", got, rdb.Get(ctx, mark).Val())
	}
	noKeys := "local a = redis.call('TIME') return {a[1], a[2], #KEYS, #ARGV}"
	if got := call(noKeys, nil, "1700000000", "0"); got != "[1700000101 7 0 1]" {
		t.Errorf("a script given no KEYS answered %s, want the mark, no KEYS and its one ARGV", got)
	}
	untimed := "return redis.call('GET', KEYS[1] .. ':none') == false"
	rdb.Del(ctx, mark)
	call(untimed, []string{key}, "1700000000", "0")
	if n := rdb.Exists(ctx, mark).Val(); n != 0 {
		t.Errorf("a call that read no TIME stored a mark")
	}
}

func TestVirtualClockAnswersEveryWayToTime(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	for _, src := range []string{
		"return redis.call('TIME')",
		"return redis.call('time')",
		"return redis.pcall('Time')",
		"local call = redis.call\nreturn call('TIME')",
		"local pcall_it = redis.pcall\nlocal t = pcall_it('TIME')\nreturn t",
		"local r = redis\nreturn r.call('TIME')",
		"#!lua flags=no-writes\nreturn redis.call('TIME')",
		"local ok, e = pcall(redis.call, 'INCR')\nreturn redis.call('TIME')",
		"local t1 = redis.call('TIME') local t2 = redis.call('TIME') return {t1[1] == t2[1] and t1[2] == t2[2], t2[1], t2[2]}",
	} {
		reply, err := rdb.Eval(ctx, limiter.VirtualClockSource(src), []string{"k"}, "", "1700000000", "5").Result()
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		got := fmt.Sprint(reply)
		if got != "[1700000000 5]" && got != "[1 1700000000 5]" {
			t.Errorf("%q answered %s, want the hammer's 1700000000 5", src, got)
		}
	}
}

// The custom strategy on the virtual clock: the script sees the call's time, to the
// microsecond, the time survives SCRIPT FLUSH (NOSCRIPT falls back to EVAL of the wrapper), and
// an error names the user's script by its own SHA1.
func TestVirtualClockStrategy(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	src := "local t = redis.call('TIME')\nredis.call('SET', KEYS[1], t[1] .. '.' .. t[2] .. '|' .. #ARGV, 'PX', 10000)\nif ARGV[1] == 'fail' then return redis.call('INCR') end\nreturn 1"
	spec := contract.Spec{Keys: "{key}", Args: "{limit}", Allowed: "reply == 1", ReadsTime: true}
	cfg := contractConfig(t, src, spec, limiter.FixedWindow)
	if cfg.Contract.Clock != contract.VirtualClock {
		t.Fatalf("a script that reads TIME and is passed no time: clock %s", cfg.Contract.Clock)
	}
	lim, err := limiter.New(limiter.FixedWindow, limiter.Custom, rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	key := keyFor(t)
	now := time.Unix(1_700_000_000, 123_456_000)
	for i := 0; i < 2; i++ {
		d, err := lim.Acquire(ctx, key, now)
		if err != nil || !d.Allowed {
			t.Fatalf("acquire %d: %v %v", i, d.Allowed, err)
		}
		if got := rdb.Get(ctx, key).Val(); got != "1700000000.123456|1" {
			t.Fatalf("the script saw TIME %q, want 1700000000.123456 and one argument", got)
		}
		rdb.ScriptFlush(ctx)
	}
	if d, err := lim.Acquire(ctx, key, now.Add(-time.Second)); err != nil || !d.Allowed {
		t.Fatalf("acquire stamped a second earlier: %v %v", d.Allowed, err)
	}
	if got := rdb.Get(ctx, key).Val(); got != "1700000000.123456|1" {
		t.Fatalf("a call stamped a second before one Redis already ran saw TIME %q: TIME went back", got)
	}
	failing := contractConfig(t, src, contract.Spec{Keys: "{key}", Args: "fail", Allowed: "reply == 1", ReadsTime: true}, limiter.FixedWindow)
	lim, _ = limiter.New(limiter.FixedWindow, limiter.Custom, rdb, failing)
	_, err = lim.Acquire(ctx, key, now)
	want := redis.NewScript(src).Hash()
	if err == nil || !strings.Contains(err.Error(), "script: "+want+", on @user_script:3.") {
		t.Fatalf("error %v, want it to name the user's script %s at its line 3", err, want)
	}
	if k := rediserr.ClassifyScriptCall(err); k != rediserr.Script {
		t.Errorf("the renamed error classifies as %q, want the script's own failure (%q)", k, rediserr.Script)
	}
}

func TestVirtualClockOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-master cluster")
	}
	cluster := redistest.StartCluster(t, 3, 0)
	rdb := cluster.Client(t)
	ctx := context.Background()
	src := "local t = redis.call('TIME')\nredis.call('SET', KEYS[1], t[1], 'PX', 10000)\nreturn 1"
	cfg := contractConfig(t, src, contract.Spec{Keys: "{key}", Args: "", Allowed: "reply == 1", ReadsTime: true}, limiter.FixedWindow)
	lim, err := limiter.New(limiter.FixedWindow, limiter.Custom, rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ { // hash tags spread over the three masters
		key := fmt.Sprintf("vc:{%d}", i)
		if _, err := lim.Acquire(ctx, key, time.Unix(1_600_000_000+int64(i), 0)); err != nil {
			t.Fatalf("key %s: %v", key, err)
		}
		if got := rdb.Get(ctx, key).Val(); got != fmt.Sprint(1_600_000_000+i) {
			t.Fatalf("key %s: TIME %s", key, got)
		}
	}
	// A script given no KEYS (its keys named in ARGV) still gets its key's mark, the only key
	// declared: the call goes to the key's slot, where the script's own keys live.
	noKeys := limiter.VirtualClockSource("local t = redis.call('TIME')\nredis.call('SET', ARGV[1], t[1], 'PX', 10000)\nreturn #KEYS")
	for i := 0; i < 12; i++ {
		key := fmt.Sprintf("vc0:{%d}", i)
		reply, err := rdb.Eval(ctx, noKeys, []string{limiter.TimeKey(key)}, key, "1", fmt.Sprint(1_600_000_000+i), "0").Result()
		if err != nil || fmt.Sprint(reply) != "0" {
			t.Fatalf("key %s with no KEYS: %v %v", key, reply, err)
		}
		if got := rdb.Get(ctx, key).Val(); got != fmt.Sprint(1_600_000_000+i) {
			t.Fatalf("key %s with no KEYS: TIME %s", key, got)
		}
	}
}
