package kind

import (
	"testing"
	"time"
)

var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestZSetKindHeuristic(t *testing.T) {
	shape := func(key string, ttl time.Duration, oldestAge, newestAge time.Duration, size int64) ZSetShape {
		return ZSetShape{
			Key: key, Size: size, TTL: ttl, Now: fixedNow, Timestamps: true,
			OldestMember: "a1b2c3-1", NewestMember: "a1b2c3-9",
			Oldest: fixedNow.Add(-oldestAge), Newest: fixedNow.Add(-newestAge),
		}
	}
	cases := []struct {
		name string
		s    ZSetShape
		want Kind
	}{
		{"name says concurrency", shape("api:concurrency:user1", time.Hour, 50*time.Minute, time.Second, 5), Concurrency},
		{"name says in-flight", shape("svc:{x}:inflight", -1, 0, 0, 1), Concurrency},
		{"sem segment", shape("rl:sem:42", -1, 0, 0, 1), Concurrency},
		{"name says sliding", shape("rl:sliding-window:u1", time.Hour, 3*time.Second, time.Second, 3), WindowLog},
		{"log segment", shape("rl:log:u1", time.Hour, 3*time.Second, time.Second, 3), WindowLog},
		{"both hints: structure decides", shape("conc:window:x", time.Hour, 3*time.Second, time.Second, 3), Concurrency},
		{"clustered near now against a long TTL", shape("rl:u1", time.Minute, 2*time.Second, time.Second, 4), Concurrency},
		{"spread over the horizon", shape("rl:u1", 2*time.Second, 1500*time.Millisecond, 100*time.Millisecond, 9), WindowLog},
		{"quarter of the horizon is a log", shape("rl:u1", 3*time.Second, 2*time.Second, time.Second, 2), WindowLog},
		{"no TTL: inconclusive", shape("rl:u1", -1, 2*time.Second, time.Second, 4), WindowLog},
		{"one member: inconclusive", shape("rl:u1", time.Minute, time.Second, time.Second, 1), WindowLog},
	}
	for _, c := range cases {
		if got := OfZSet(c.s); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	notTimes := shape("rl:concurrency", time.Minute, time.Second, time.Second, 2)
	notTimes.Timestamps = false
	if got := OfZSet(notTimes); got != Unknown {
		t.Errorf("scores not timestamps: %s, want unknown", got)
	}
	names := shape("rl:concurrency", time.Minute, time.Second, time.Second, 2)
	names.OldestMember = "alice"
	if got := OfZSet(names); got != Unknown {
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

func TestTATTime(t *testing.T) {
	epoch2017 := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
	full := fixedNow.Add(1500 * time.Millisecond)
	cases := []struct {
		name string
		v    float64
		ok   bool
	}{
		{"redis_rate: seconds since 2017", full.Sub(epoch2017).Seconds(), true},
		{"unix ms", float64(full.UnixMilli()), true},
		{"unix s", float64(full.UnixMicro()) / 1e6, true},
		{"unix ns", float64(full.UnixNano()), true},
		{"a price", 12.5, false}, // 2017-01-01 plus 12.5s is no TAT in 2025
		{"a TAT a year old", float64(fixedNow.Add(-365 * 24 * time.Hour).UnixMilli()), false},
		{"negative", -3, false},
	}
	for _, c := range cases {
		at, ok := TATTime(c.v, fixedNow)
		if ok != c.ok || ok && (at.Sub(full) > time.Millisecond || full.Sub(at) > time.Millisecond) {
			t.Errorf("%s: TATTime(%v) = %v %v, want %v %v", c.name, c.v, at, ok, full, c.ok)
		}
	}
	if !TATMatchesTTL(full, 2*time.Second, fixedNow) || TATMatchesTTL(full, time.Hour, fixedNow) || TATMatchesTTL(full, -1, fixedNow) {
		t.Errorf("TATMatchesTTL: an expiry at the TAT matches, an hour later or none does not")
	}
}

func TestInferWindow(t *testing.T) {
	for _, w := range []time.Duration{time.Second, 10 * time.Second, time.Minute, 90 * time.Second, time.Hour, 24 * time.Hour} {
		now := fixedNow.Add(12345 * time.Millisecond)
		idx := now.UnixMilli() / w.Milliseconds()
		for behind := int64(0); behind <= 2; behind++ {
			if got, ok := InferWindow(idx-behind, now); !ok || got != w {
				t.Errorf("window %s, index %d behind: inferred %s %v", w, behind, got, ok)
			}
		}
	}
	if _, ok := InferWindow(fixedNow.UnixMilli()*2, fixedNow); ok {
		t.Errorf("an index beyond now in ms is no window index")
	}
}

func TestWindowKey(t *testing.T) {
	for key, want := range map[string]int64{"a:12": 12, "@upstash/ratelimit:u:179607097": 179607097, "a:012": 0, "a:": 0, "12": 0, "a:-3": 0, "a:x": 0} {
		_, n, ok := WindowKey(key)
		if ok != (want > 0) || n != want && ok {
			t.Errorf("WindowKey(%q) = %d %v, want %d", key, n, ok, want)
		}
	}
}
