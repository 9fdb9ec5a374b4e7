package runkeys

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// The end-of-run read attributes each key of the run to the strategy whose limiter wrote it,
// and leaves out the hammer's own keys (the Redis witness, shared admits, probes, the
// participants) and every key the run does not own.
func TestStrategyOfNamesTheLimitersKeysOnly(t *testing.T) {
	k := Scheme{Prefix: "rl", RunID: "r1", Limiter: limiter.FixedWindow, Keys: 1, Strategies: []string{"lua", "custom"}}
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"rl:{r1}:lua", "lua", true},
		{"rl:{r1}:lua:1700000000000", "lua", true}, // a window's counter
		{"rl:{r1}:custom", "custom", true},
		{"rl:{r1}:custom:exp", "custom", true},        // a script's own suffix
		{"rl:{r1}:custom.tokens", "custom", true},     // another library's separator
		{"rl:{r1}:custom:once:17000", "custom", true}, // the single hit's window
		{"rl:{r1}:lua:witness", "", false},
		{"rl:{r1}:custom:limitctl-time", "", false}, // the virtual clock's mark
		{"rl:{r1}:custom:once:limitctl-time", "", false},
		{"rl:{r1}:custom:witness", "", false},
		{"rl:{r1}:lua:admits:17", "", false},
		{"rl:{r1}:probe-lua", "", false},
		{"rl:{r1}:probe-custom:x", "", false},
		{"rl:{r1}:participants", "", false},
		{"rl:{r11}:lua", "", false},  // another run
		{"rl:{r1}:naive", "", false}, // a strategy not in the run
	} {
		got, ok := k.StrategyOf(tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("StrategyOf(%q) = %q, %v; want %q, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

// Keys without a TTL and keys whose TTL is far beyond what the limiter needs are leaks, with
// samples; a TTL of a few or tens of windows is none; the largest set or list is named.
func TestLeftoversCountWhatNeverExpires(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	k := Scheme{Prefix: "rl", RunID: "left1", Limiter: limiter.SlidingWindow, Keys: 1, Strategies: []string{"lua", "custom"}}
	for i := 0; i < 300; i++ {
		rdb.ZAdd(ctx, k.Key("custom", 0), redis.Z{Score: float64(i), Member: strconv.Itoa(i)})
	}
	rdb.PExpire(ctx, k.Key("custom", 0), 30*time.Second) // 30 windows: no leak
	rdb.Set(ctx, k.Key("custom", 0)+":exp", "1", 0)      // no TTL
	rdb.Set(ctx, k.Key("custom", 0)+":years", "1", 56*365*24*time.Hour)
	rdb.HSet(ctx, k.Key("lua", 0), "tat", "1")
	rdb.PExpire(ctx, k.Key("lua", 0), 2*time.Second)
	rdb.Set(ctx, k.Key("lua", 0)+":witness", "3", 0) // the hammer's own, never a leak
	rdb.Set(ctx, "rl:{other}:custom", "1", 0)        // another run's

	found, err := k.Leftovers(ctx, rdb, bench.LeakTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	custom := found["custom"]
	if custom.Leaks.KeysWithoutTTL != 1 || custom.Leaks.KeysTTLTooLong != 1 || len(custom.Leaks.Samples) != 2 {
		t.Fatalf("custom leaks %+v", custom.Leaks)
	}
	for _, s := range custom.Leaks.Samples {
		switch s.Key {
		case k.Key("custom", 0) + ":exp":
			if s.Type != "string" || s.TTLMs != -1 || s.Size != 1 {
				t.Errorf("no-TTL sample %+v", s)
			}
		case k.Key("custom", 0) + ":years":
			if s.TTLMs < int64(50*365*24*time.Hour/time.Millisecond) {
				t.Errorf("years sample %+v", s)
			}
		default:
			t.Errorf("sample of a key that does not leak: %+v", s)
		}
	}
	if l := custom.Largest; l == nil || l.Key != k.Key("custom", 0) || l.Type != "zset" || l.Size != 300 {
		t.Errorf("largest %+v", custom.Largest)
	}
	if lua := found["lua"]; lua.Leaks.Total() != 0 || lua.Largest != nil { // a bucket's hash holds its few fields however busy
		t.Errorf("lua %+v", lua)
	}
}

// SCAN may return a key twice: it is one suspect, counted once; past maxSuspects a key counts
// as first read, so a run that leaked millions of keys is read in bounded memory.
func TestSuspectsAreEachKeyOnceAndBounded(t *testing.T) {
	var set suspectSet
	found := map[string]bench.Leftovers{}
	set.add(suspect{owner: "custom", state: bench.KeyState{Key: "k1", TTLMs: -1}}, found)
	set.add(suspect{owner: "custom", state: bench.KeyState{Key: "k1", TTLMs: -1}}, found)
	if len(set.list) != 1 {
		t.Fatalf("a key scanned twice is %d suspects", len(set.list))
	}
	for i := 0; i < maxSuspects+10; i++ {
		set.add(suspect{owner: "custom", state: bench.KeyState{Key: "n" + strconv.Itoa(i), TTLMs: -1}}, found)
	}
	if len(set.list) != maxSuspects || found["custom"].Leaks.KeysWithoutTTL != 11 {
		t.Errorf("%d suspects kept, %d counted as first read; want %d and 11", len(set.list), found["custom"].Leaks.KeysWithoutTTL, maxSuspects)
	}
}

// A key seen without a TTL is read again before it counts: one whose EXPIRE came a moment
// later (a client's write and its EXPIRE sent as two commands) leaked nothing; one that expired
// meanwhile neither.
func TestLeftoversReadASuspectAgain(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	rdb.Set(ctx, "s:{r}:expired-since", "1", 0)
	rdb.Set(ctx, "s:{r}:still", "1", 0)
	rdb.Set(ctx, "s:{r}:gone", "1", 0)
	suspects := []suspect{
		{m: rdb, owner: "lua", state: bench.KeyState{Key: "s:{r}:expired-since", TTLMs: -1}},
		{m: rdb, owner: "lua", state: bench.KeyState{Key: "s:{r}:still", TTLMs: -1}},
		{m: rdb, owner: "lua", state: bench.KeyState{Key: "s:{r}:gone", TTLMs: -1}},
	}
	rdb.PExpire(ctx, "s:{r}:expired-since", time.Minute) // its EXPIRE, after the first read
	rdb.Del(ctx, "s:{r}:gone")
	if err := recheck(ctx, suspects, time.Hour); err != nil {
		t.Fatal(err)
	}
	if suspects[0].leaks || !suspects[1].leaks || suspects[2].leaks {
		t.Errorf("after the second read: %+v", suspects)
	}
}

// BenchmarkLeftovers10k is the end-of-run read of a run that left 10,000 keys (fixed-window
// counters with their TTL, one a window, as a 3-hour run with a 1s window leaves): SCAN, then
// TYPE+PTTL and the sizes in pipelines of leftoverBatch.
//
//	go test -run '^$' -bench Leftovers10k -benchtime 20x ./internal/hammer/runkeys/
func BenchmarkLeftovers10k(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	k := Scheme{Prefix: "rl", RunID: "bench", Limiter: limiter.FixedWindow, Keys: 1, Strategies: []string{"lua"}}
	pipe := rdb.Pipeline()
	for i := 0; i < 10_000; i++ {
		pipe.Set(ctx, k.Key("lua", 0)+":"+strconv.Itoa(1_700_000_000_000+i*1000), "20", time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		found, err := k.Leftovers(ctx, rdb, bench.LeakTTL(time.Second))
		if err != nil || found["lua"].Leaks.Total() != 0 {
			b.Fatalf("%v %+v", err, found)
		}
	}
}
