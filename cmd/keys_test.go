package cmd

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Helpers shared by the inspect and purge tests.

// fixedNow is the injected clock of the inspect and purge tests (with --clock local).
var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// runConfig is what runIn varies beyond run: the clock, the context, the terminal, stdin.
type runConfig struct {
	now time.Time       // the factory's clock; zero keeps time.Now
	ctx context.Context // nil: background
	tty bool            // stdin and stdout are terminals
	// columns is the terminal's width (0: 80, what a terminal whose size cannot be read gets).
	columns int
	stdin   string
	// setup runs on the factory before the command, e.g. to add a hook to its client.
	setup func(f *Factory)
}

// runIn executes limitctl in-process like run, with an injected clock, context and terminal.
// It mirrors Execute minus the signal handling, which a test replaces by cancelling ctx.
func runIn(t *testing.T, rc runConfig, args ...string) result {
	t.Helper()
	for _, k := range []string{"REDIS_URL", "REDISCLI_AUTH", "NO_COLOR"} {
		t.Setenv(k, "")
	}
	streams, in, out, errOut := TestStreams()
	in.WriteString(rc.stdin)
	streams.StdinTTY, streams.StdoutTTY = rc.tty, rc.tty
	streams.Columns = rc.columns
	f := NewFactory(streams, Build{Version: "test"})
	defer f.Close()
	if !rc.now.IsZero() {
		f.Now = func() time.Time { return rc.now }
	}
	if rc.setup != nil {
		rc.setup(f)
	}
	ctx := rc.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	root := NewRootCmd(f)
	root.SetIn(streams.In)
	root.SetOut(out)
	root.SetErr(errOut)
	code := runRoot(ctx, f, root, args)
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

// at runs with the fixed clock: every age in the fixture is exact with --clock local.
func at(t *testing.T, args ...string) result {
	t.Helper()
	return runIn(t, runConfig{now: fixedNow}, args...)
}

// ms is a millisecond score for a time age before fixedNow.
func msAgo(age time.Duration) float64 { return float64(fixedNow.Add(-age).UnixMilli()) }

// seedLimiterKeys writes the command tests' fixture relative to fixedNow. With --stale 10m and
// --limit 3 it is 8 keys, 2511 sorted-set members of which 2505 are stale.
func seedLimiterKeys(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	z := func(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
	sec := func(age time.Duration) float64 { return float64(fixedNow.Add(-age).Unix()) }
	us := func(age time.Duration) float64 { return float64(fixedNow.Add(-age).UnixMicro()) }

	check(rdb.ZAdd(ctx, "rl:conc:u1", z(msAgo(time.Second), "req-1"), z(msAgo(2*time.Second), "req-2"),
		z(msAgo(20*time.Minute), "req-3"), z(msAgo(30*time.Minute), "req-4")).Err())
	check(rdb.PExpire(ctx, "rl:conc:u1", time.Hour).Err())
	check(rdb.ZAdd(ctx, "rl:sliding:u2", z(sec(5*time.Second), "r-1"), z(sec(11*time.Minute), "r-2")).Err())
	check(rdb.ZAdd(ctx, "rl:sw:u3", z(us(time.Second), "x-1"), z(us(15*time.Minute), "x-2"), z(us(16*time.Minute), "x-3")).Err())
	check(rdb.PExpire(ctx, "rl:sw:u3", time.Hour).Err())
	check(rdb.Set(ctx, "rl:fw:u4", 5, time.Hour).Err())
	check(rdb.Set(ctx, "rl:fw:u5", 2, 0).Err())
	check(rdb.HSet(ctx, "rl:tb:u6", "tokens", "7.9", "ts", strconv.FormatInt(fixedNow.Add(-3*time.Second).UnixMilli(), 10)).Err())
	check(rdb.PExpire(ctx, "rl:tb:u6", time.Hour).Err())
	check(rdb.RPush(ctx, "rl:junk", "a", "b").Err())
	big := []redis.Z{z(msAgo(time.Second), "new-1"), z(msAgo(2*time.Second), "new-2")}
	for i := 0; i < 2500; i++ {
		big = append(big, z(msAgo(11*time.Minute+time.Duration(i)*time.Millisecond), "old-"+strconv.Itoa(i)))
	}
	check(rdb.ZAdd(ctx, "rl:big:log", big...).Err())
	check(rdb.PExpire(ctx, "rl:big:log", time.Hour).Err())
}

// freshMembers is what each sorted set of the fixture must hold after a purge of 10m.
var freshMembers = map[string][]string{
	"rl:conc:u1":    {"req-1", "req-2"},
	"rl:sliding:u2": {"r-1"},
	"rl:sw:u3":      {"x-1"},
	"rl:big:log":    {"new-1", "new-2"},
}

func membersOf(t *testing.T, rdb redis.UniversalClient, key string) []string {
	t.Helper()
	m, err := rdb.ZRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

func i64(n int64) *int64 { return &n }

// wantInspect is the fixture's inspect -o json with --stale 10m --limit 3, nodes, TTLs and
// memory left out (they depend on the server and the time the test takes).
func str(s string) *string { return &s }

func wantInspect() []inspectKey {
	ms, s, us, start := str("ms"), str("s"), str("us"), str("start")
	return []inspectKey{
		{Key: "rl:big:log", Type: "zset", Kind: "window_log", Size: 2502, TTLMs: 3600000, OldestAgeMs: i64(662499), NewestAgeMs: i64(1000), Stale: 2500, Flags: []string{"STALE", "OVER_LIMIT"}, ScoreUnit: ms, Scores: start, ScoresGuessed: true},
		{Key: "rl:conc:u1", Type: "zset", Kind: "concurrency", Size: 4, TTLMs: 3600000, OldestAgeMs: i64(1800000), NewestAgeMs: i64(1000), Stale: 2, Flags: []string{"STALE", "OVER_LIMIT"}, ScoreUnit: ms, Scores: start, ScoresGuessed: true},
		{Key: "rl:fw:u4", Type: "string", Kind: "counter", Size: 5, TTLMs: 3600000, Stale: 0, Flags: []string{"OVER_LIMIT"}},
		{Key: "rl:fw:u5", Type: "string", Kind: "counter", Size: 2, TTLMs: -1, Flags: []string{"NO_TTL"}},
		{Key: "rl:junk", Type: "list", Kind: "unknown", Size: 2, TTLMs: -1, Flags: []string{"NO_TTL"}},
		{Key: "rl:sliding:u2", Type: "zset", Kind: "window_log", Size: 2, TTLMs: -1, OldestAgeMs: i64(660000), NewestAgeMs: i64(5000), Stale: 1, Flags: []string{"NO_TTL", "STALE"}, ScoreUnit: s, Scores: start, ScoresGuessed: true},
		{Key: "rl:sw:u3", Type: "zset", Kind: "window_log", Size: 3, TTLMs: 3600000, OldestAgeMs: i64(960000), NewestAgeMs: i64(1000), Stale: 2, Flags: []string{"STALE"}, ScoreUnit: us, Scores: start, ScoresGuessed: true},
		{Key: "rl:tb:u6", Type: "hash", Kind: "bucket", Size: 7, TTLMs: 3600000, OldestAgeMs: i64(3000), NewestAgeMs: i64(3000), Flags: []string{}, ScoreUnit: ms},
	}
}
