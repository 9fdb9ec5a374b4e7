package keys

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/redistest"
)

var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestDetectUnitByMagnitudeRelativeToNow(t *testing.T) {
	at := fixedNow.Add(-90 * time.Second)
	cases := []struct {
		score float64
		want  ScoreUnit
		ok    bool
	}{
		{UnitSeconds.Score(at), UnitSeconds, true},
		{UnitSeconds.Score(at) + 0.25, UnitSeconds, true},
		{UnitMillis.Score(at), UnitMillis, true},
		{UnitMicros.Score(at), UnitMicros, true},
		{UnitNanos.Score(at), UnitNanos, true},
		{UnitMillis.Score(fixedNow.Add(-9 * 365 * 24 * time.Hour)), UnitMillis, true},
		{UnitMillis.Score(fixedNow.Add(-11 * 365 * 24 * time.Hour)), "", false}, // too old to be a limiter's
		{UnitMillis.Score(fixedNow.Add(23 * time.Hour)), UnitMillis, true},      // a client clock ahead
		{UnitMillis.Score(fixedNow.Add(48 * time.Hour)), "", false},
		{1, "", false}, {42, "", false}, {0, "", false}, {-5, "", false}, {3.5e30, "", false},
	}
	for _, c := range cases {
		got, ok := DetectUnit(c.score, fixedNow)
		if got != c.want || ok != c.ok {
			t.Errorf("DetectUnit(%v) = %q, %v; want %q, %v", c.score, got, ok, c.want, c.ok)
		}
	}
}

func TestScoresRoundTripExactly(t *testing.T) {
	at := fixedNow.Add(-1234567 * time.Microsecond)
	for _, u := range units {
		score := u.Score(at)
		back, ok := u.Time(score)
		if !ok {
			t.Fatalf("%s: %v not a time", u, score)
		}
		// float64 holds a nanosecond timestamp only to about 256 ns.
		if d := back.Sub(at); d < -256 || d > 256 {
			t.Errorf("%s: %v -> %v, off by %v", u, at, back, d)
		}
	}
	if got := UnitMillis.Score(time.UnixMilli(1748779200123)); got != 1748779200123 {
		t.Errorf("ms score %v, want 1748779200123", got)
	}
	if got := UnitSeconds.Score(time.Unix(1748779194, 500_000_000)); got != 1748779194.5 {
		t.Errorf("s score %v, want 1748779194.5", got)
	}
	if _, ok := UnitSeconds.Time(1.7e12); ok {
		t.Errorf("a millisecond score read as seconds should be out of range")
	}
}

func TestParseScoreUnit(t *testing.T) {
	for _, s := range []string{"auto", "s", "ms", "us", "ns"} {
		if _, err := ParseScoreUnit(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseScoreUnit("sec"); err == nil {
		t.Errorf("sec accepted")
	}
}

func TestZSetKindHeuristic(t *testing.T) {
	shape := func(key string, ttl time.Duration, oldestAge, newestAge time.Duration, size int64) zsetShape {
		return zsetShape{
			key: key, size: size, ttl: ttl, now: fixedNow, timestamps: true,
			oldestMember: "a1b2c3-1", newestMember: "a1b2c3-9",
			oldest: fixedNow.Add(-oldestAge), newest: fixedNow.Add(-newestAge),
		}
	}
	cases := []struct {
		name string
		s    zsetShape
		want Kind
	}{
		{"name says concurrency", shape("api:concurrency:user1", time.Hour, 50*time.Minute, time.Second, 5), KindConcurrency},
		{"name says in-flight", shape("svc:{x}:inflight", -1, 0, 0, 1), KindConcurrency},
		{"sem segment", shape("rl:sem:42", -1, 0, 0, 1), KindConcurrency},
		{"name says sliding", shape("rl:sliding-window:u1", time.Hour, 3*time.Second, time.Second, 3), KindWindowLog},
		{"log segment", shape("rl:log:u1", time.Hour, 3*time.Second, time.Second, 3), KindWindowLog},
		{"both hints: structure decides", shape("conc:window:x", time.Hour, 3*time.Second, time.Second, 3), KindConcurrency},
		{"clustered near now against a long TTL", shape("rl:u1", time.Minute, 2*time.Second, time.Second, 4), KindConcurrency},
		{"spread over the horizon", shape("rl:u1", 2*time.Second, 1500*time.Millisecond, 100*time.Millisecond, 9), KindWindowLog},
		{"quarter of the horizon is a log", shape("rl:u1", 3*time.Second, 2*time.Second, time.Second, 2), KindWindowLog},
		{"no TTL: inconclusive", shape("rl:u1", -1, 2*time.Second, time.Second, 4), KindWindowLog},
		{"one member: inconclusive", shape("rl:u1", time.Minute, time.Second, time.Second, 1), KindWindowLog},
	}
	for _, c := range cases {
		if got := zsetKind(c.s); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	notTimes := shape("rl:concurrency", time.Minute, time.Second, time.Second, 2)
	notTimes.timestamps = false
	if got := zsetKind(notTimes); got != KindUnknown {
		t.Errorf("scores not timestamps: %s, want unknown", got)
	}
	names := shape("rl:concurrency", time.Minute, time.Second, time.Second, 2)
	names.oldestMember = "alice"
	if got := zsetKind(names); got != KindUnknown {
		t.Errorf("members not request ids: %s, want unknown", got)
	}
}

func TestRequestID(t *testing.T) {
	for _, m := range []string{"a1b2c3-17", "1748779200123", "550e8400-e29b-41d4-a716-446655440000", "req:9"} {
		if !requestID(m) {
			t.Errorf("%q should look like a request id", m)
		}
	}
	for _, m := range []string{"", "alice", "with space 1", string(make([]byte, 129)), "tab\t1"} {
		if requestID(m) {
			t.Errorf("%q should not look like a request id", m)
		}
	}
}

func TestIsPattern(t *testing.T) {
	for arg, want := range map[string]bool{"rl:*": true, "rl:?": true, "rl:[ab]": true, "rl:user:1": false, "{x}:y": false} {
		if IsPattern(arg) != want {
			t.Errorf("IsPattern(%q) = %v", arg, !want)
		}
	}
}

// --clock names one of two clocks; the server's, when it cannot be read, says how to do
// without it, unless the caller gave up (Ctrl-C), where the hint would be noise.
func TestClockNames(t *testing.T) {
	var usage *exitcode.UsageError
	if _, err := ParseClockName("utc"); !errors.As(err, &usage) {
		t.Errorf("--clock utc: %v, want a usage error", err)
	}
	local, err := ParseClockName("local")
	if err != nil {
		t.Fatal(err)
	}
	if now, err := local.Clock(nil, func() time.Time { return fixedNow })(context.Background()); err != nil || !now.Equal(fixedNow) {
		t.Errorf("local clock = %v, %v; want %v", now, err, fixedNow)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t)), MaxRetries: -1})
	defer rdb.Close()
	server := ClockServer.Clock(rdb, nil)
	if _, err := server(context.Background()); err == nil || !strings.Contains(err.Error(), "--clock local") {
		t.Errorf("unreadable server TIME: %v, want the --clock local hint", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := server(ctx); err == nil || strings.Contains(err.Error(), "--clock local") {
		t.Errorf("cancelled: %v, want an error without the hint", err)
	}
}
