package lint

import "testing"

// ReadsTime finds TIME however a script reaches it, and only TIME: the hammer's clock default
// depends on it.
func TestReadsTime(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"return redis.call('TIME')", true},
		{"return redis.pcall('time')", true},
		{"local call = redis.call\nreturn call('Time')", true},
		{"return server.call('TIME')", true},
		{"#!lua flags=no-writes\nreturn redis.call('TIME')", true},
		{"return redis.call('HGET', KEYS[1], 'time')", false},
		{"return redis.call('SET', KEYS[1], ARGV[1], 'PX', 100)", false},
		{"local x = = 1", false},
	} {
		if got := ReadsTime([]byte(c.src)); got != c.want {
			t.Errorf("ReadsTime(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// With the clock the caller's (the hammer answers TIME, or runs on the server's on purpose), a
// TIME read is not reported; other nondeterminism still is.
func TestTimeAnsweredDropsOnlyTimeReads(t *testing.T) {
	src := []byte("local t = redis.call('TIME')\nlocal k = redis.call('RANDOMKEY')\nreturn {t[1], k}\n")
	all := LintWith("s.lua", src, Config{})
	answered := LintWith("s.lua", src, Config{TimeAnswered: true})
	if len(all)-len(answered) != 1 {
		t.Fatalf("all %v\nanswered %v", all, answered)
	}
	for _, d := range answered {
		if isTimeRead(d) {
			t.Errorf("a TIME read was reported: %v", d)
		}
	}
}
