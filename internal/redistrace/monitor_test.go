package redistrace

import (
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// MONITOR's lines as Redis writes them: the time, the client (an address, IPv6, a unix socket,
// a script's "lua"), each argument quoted with sdscatrepr's escapes.
func TestParseMonitorLineReadsEveryFormRedisWrites(t *testing.T) {
	all := func(string, string) bool { return true }
	for _, c := range []struct {
		line   string
		client string
		lua    bool
		args   []string
		us     int64
	}{
		{`1796646392.166229 [0 127.0.0.1:55586] "INCR" "app:abc.0"`, "127.0.0.1:55586", false, []string{"INCR", "app:abc.0"}, 1796646392166229},
		{`1796646392.000001 [3 lua] "zadd" "k" "17" "r7"`, "lua", true, []string{"ZADD", "k", "17", "r7"}, 1796646392000001},
		{`1.5 [0 [::1]:6000] "GET" "k"`, "[::1]:6000", false, []string{"GET", "k"}, 1000005},
		{`2.000000 [0 unix:/tmp/redis.sock] "SET" "a b" "x\"y\\z\n\x00\xff"`, "unix:/tmp/redis.sock", false,
			[]string{"SET", "a b", "x\"y\\z\n\x00\xff"}, 2000000},
		{`2.000000 [0 10.0.0.1:1] "SET" "" "\t\r\a\b"`, "10.0.0.1:1", false, []string{"SET", "", "\t\r\a\b"}, 2000000},
	} {
		m, err := parseMonitorLine(c.line, all)
		if err != nil || m.client != c.client || m.lua != c.lua || !reflect.DeepEqual(m.args, c.args) || m.serverUs != c.us {
			t.Errorf("%s: %+v, %v; want %s %v %q at %d", c.line, m, err, c.client, c.lua, c.args, c.us)
		}
	}
}

// A command of no interest is read no further than its name; a line that is not MONITOR's is an
// error, never a command.
func TestParseMonitorLineSkipsWhatIsNotWantedAndRefusesWhatIsNotALine(t *testing.T) {
	m, err := parseMonitorLine(`1.0 [0 1.2.3.4:5] "GET" "other" "x"`, func(name, rest string) bool { return false })
	if err != nil || !reflect.DeepEqual(m.args, []string{"GET"}) {
		t.Errorf("%+v, %v; want the name alone", m, err)
	}
	for _, bad := range []string{"OK", "", `1.0 [0 1.2.3.4:5] GET`, `x.y [0 a] "GET"`, `1.0 [0 a] "GET`, `1.0 [0 a] "\x4"`} {
		if m, err := parseMonitorLine(bad, func(string, string) bool { return true }); err == nil {
			t.Errorf("%q read as %+v", bad, m)
		}
	}
}

// An identity is <run-id>.<i>, the i-th of target i/Keys; it is held only whole (run.1 is not in
// run.10, nor in xrun.1) and never in the run's own keys.
func TestIdentitiesAreFoundWholeAndOnlyTheApplications(t *testing.T) {
	ids := Identities{RunID: "ab12", Keys: 2, Targets: []string{"naive", "atomic"}, Exclude: func(k string) bool { return k == "limitctl:{ab12.1}:lua" }}
	for _, c := range []struct {
		s                string
		target, identity int
		ok               bool
	}{
		{"app:ab12.0", 0, 0, true},
		{"app:ab12.1:x", 0, 1, true},
		{"app:{ab12.3}", 1, 1, true},
		{"ab12.2", 1, 0, true},
		{"app:ab12.10", 0, 0, false}, // beyond the targets' identities
		{"app:xab12.1", 0, 0, false},
		{"app:ab12.", 0, 0, false},
		{"app:ab13.1", 0, 0, false},
		{"app:xab12.1 ab12.1", 0, 1, true},
	} {
		target, identity, ok := ids.Of(c.s)
		if ok != c.ok || ok && (target != c.target || identity != c.identity) {
			t.Errorf("%s: target %d identity %d %v; want %d %d %v", c.s, target, identity, ok, c.target, c.identity, c.ok)
		}
	}
	if ids.Holds("limitctl:{ab12.1}:lua") || !ids.Holds("app:ab12.1") {
		t.Error("the run's own key held, or the application's not")
	}
}

// Stop keeps the backlog: a burst of commands sent just before it, which a MONITOR stream has
// not read yet (Redis runs a pipeline faster than a stream of its lines is parsed), is kept to
// the last command. Shutting the door before the stream reached its marker lost a busy run's
// last seconds, and the race with them.
func TestStopKeepsWhatTheStreamHadNotReadYet(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ids := Identities{RunID: "burst1", Keys: 1, Targets: []string{"app"}}
	tr, err := Start(t.Context(), Config{Identities: ids, Nodes: []*redis.Options{rdb.Options()}})
	if err != nil {
		t.Fatal(err)
	}
	tr.Begin(time.Now())
	const burst = 50_000
	pipe := rdb.Pipeline()
	for range burst {
		pipe.Incr(t.Context(), "app:burst1.0")
	}
	if _, err := pipe.Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tr.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	incrs := 0
	for _, c := range tr.Export() {
		if c.Name == "INCR" {
			incrs++
		}
	}
	if incrs != burst {
		t.Fatalf("the trace kept %d of the %d INCRs sent before Stop", incrs, burst)
	}
}
