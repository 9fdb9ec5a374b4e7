package keys

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
)

// Keys written by running fixture scripts that follow well-known libraries' calling styles
// (testdata/keys/*.lua, each naming the library it follows) against a real redis-server, then
// inspected as an operator would: the kind and the fields that say what the key holds.

// evalFixture runs testdata/keys/<name> with keys and args, as the library would call it.
func evalFixture(t *testing.T, rdb redis.UniversalClient, name string, keys []string, args ...any) any {
	t.Helper()
	src, err := os.ReadFile("../../testdata/keys/" + name)
	must(t, err)
	v, err := rdb.Eval(context.Background(), string(src), keys, args...).Result()
	if err != nil && err != redis.Nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// inspectKeys inspects the named keys with the server's clock, by key.
func inspectKeys(t *testing.T, rdb redis.UniversalClient, opts InspectOptions, names ...string) map[string]KeyInfo {
	t.Helper()
	ctx := context.Background()
	opts.Clock = ServerClock(rdb)
	sel, err := Select(ctx, rdb, names, SelectOptions{})
	must(t, err)
	in, err := Inspect(ctx, rdb, sel, opts)
	must(t, err)
	got := map[string]KeyInfo{}
	for _, k := range in.Keys {
		got[k.Key] = k
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			t.Fatalf("%s: not inspected (%+v)", n, in)
		}
	}
	return got
}

func serverNow(t *testing.T, rdb redis.UniversalClient) time.Time {
	t.Helper()
	now, err := ServerClock(rdb)(context.Background())
	must(t, err)
	return now
}

// Spring Cloud Gateway's first layout: the tokens and the refill time in two strings. Read one
// by one they are counters, the timestamp one counting to 1.8 billion.
func TestInspectTwoStringBucket(t *testing.T) {
	rdb := singleServer(t).Client(t)
	tokens, stamp := "request_rate_limiter.{lib-user42}.tokens", "request_rate_limiter.{lib-user42}.timestamp"
	for i := 0; i < 3; i++ {
		evalFixture(t, rdb, "spring_gateway_two_keys.lua", []string{tokens, stamp}, 10, 20, serverNow(t, rdb).Unix(), 1)
	}
	got := inspectKeys(t, rdb, InspectOptions{Limit: 100, HasLimit: true}, tokens, stamp)
	for key, pair := range map[string]string{tokens: stamp, stamp: tokens} {
		k := got[key]
		if k.Kind != kind.Bucket || k.Size != 17 || k.Unit != scores.UnitSeconds || k.PairKey != pair || k.OldestAge == nil ||
			*k.OldestAge > 2*time.Second || len(k.Flags) != 0 {
			t.Errorf("%s: %+v, want a bucket of 17 tokens refilled in the last 2s (s), paired with %s, no flags", key, k, pair)
		}
	}
}

// A strings pair whose "timestamp" is no time stays two counters.
func TestInspectTwoStringsThatAreNoBucket(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	must(t, rdb.Set(ctx, "lib-nobucket.tokens", 5, time.Minute).Err())
	must(t, rdb.Set(ctx, "lib-nobucket.timestamp", 12, time.Minute).Err())
	got := inspectKeys(t, rdb, InspectOptions{}, "lib-nobucket.tokens", "lib-nobucket.timestamp")
	for key, k := range got {
		if k.Kind != kind.Counter || k.PairKey != "" {
			t.Errorf("%s: %+v, want a counter", key, k)
		}
	}
}

// Request logs kept as lists of timestamps (alisaifee/limits' moving window, sidekiq-throttled's
// threshold strategy) are window logs; a list of other things (a job queue) stays unknown.
func TestInspectTimestampLists(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	secs := func() string { return strconv.FormatFloat(float64(serverNow(t, rdb).UnixMicro())/1e6, 'f', 6, 64) }
	moving, threshold, queue := "LIMITS:LIMITER/lib-10.0.0.7/10/1/minute", "throttled:LibImportJob:threshold", "queue:lib-default"
	for i := 0; i < 3; i++ {
		evalFixture(t, rdb, "../limiters/moving_window_list.lua", []string{moving}, secs(), 10, 60, 1)
	}
	for i := 0; i < 2; i++ {
		evalFixture(t, rdb, "timestamp_list.lua", []string{threshold}, 10, 60, secs())
	}
	must(t, rdb.LPush(ctx, queue, `{"class":"HardJob","jid":"b4a577edbccf1d80","args":[1,2]}`, `{"class":"HardJob","jid":"0c1d2e3f40516273","args":[3]}`).Err())
	got := inspectKeys(t, rdb, InspectOptions{Limit: 2, HasLimit: true}, moving, threshold, queue)
	for key, size := range map[string]int64{moving: 3, threshold: 2} {
		k := got[key]
		if k.Kind != kind.WindowLog || k.Size != size || k.Unit != scores.UnitSeconds || k.OldestAge == nil || k.NewestAge == nil ||
			*k.OldestAge < *k.NewestAge || *k.OldestAge > 5*time.Second || *k.NewestAge < 0 {
			t.Errorf("%s: %+v, want a window log of %d timestamps (s) written in the last 5s", key, k, size)
		}
	}
	if k := got[moving]; !hasFlag(k.Flags, FlagOverLimit) {
		t.Errorf("%s: flags %v, want OVER_LIMIT (3 entries, --limit 2)", moving, k.Flags)
	}
	if k := got[queue]; k.Kind != kind.Unknown || k.OldestAge != nil {
		t.Errorf("%s: %+v, want unknown without ages", queue, k)
	}
}

func hasFlag(flags []Flag, f Flag) bool {
	for _, g := range flags {
		if g == f {
			return true
		}
	}
	return false
}

// A fixed window kept in one hash {start, end, count} (Laravel's DurationLimiter) is a counter
// whose size is the count and whose window is end - start.
func TestInspectWindowHash(t *testing.T) {
	rdb := singleServer(t).Client(t)
	key := "lib-mailgun-api"
	for i := 0; i < 3; i++ {
		now := serverNow(t, rdb)
		evalFixture(t, rdb, "window_hash.lua", []string{key}, float64(now.UnixMicro())/1e6, now.Unix(), 60, 2)
	}
	k := inspectKeys(t, rdb, InspectOptions{Limit: 2, HasLimit: true}, key)[key]
	if k.Kind != kind.Counter || k.Size != 3 || k.Window != time.Minute || k.Unit != scores.UnitSeconds || k.OldestAge == nil ||
		*k.OldestAge > 5*time.Second || !hasFlag(k.Flags, FlagOverLimit) {
		t.Errorf("%s: %+v, want a counter of 3 in a 60s window started in the last 5s (s), OVER_LIMIT at --limit 2", key, k)
	}
}

// alisaifee/limits' sliding window counter: the current window {<key>} and the previous one
// {<key>}/-1, renamed into place when a window ends. Both are sliding counters, the window read
// from the key (…/<amount>/<multiples>/<granularity>) and the estimate as limits weighs it.
func TestInspectRenamedCounterPair(t *testing.T) {
	rdb := singleServer(t).Client(t)
	cur := "LIMITS:{LIMITER/lib-10.0.0.9/10/3/second}"
	prev := cur + "/-1"
	for i := 0; i < 3; i++ {
		evalFixture(t, rdb, "sliding_rename_pair.lua", []string{prev, cur}, 10, 3, 1)
	}
	time.Sleep(3300 * time.Millisecond) // into the next window: the current counter becomes the previous one
	evalFixture(t, rdb, "sliding_rename_pair.lua", []string{prev, cur}, 10, 3, 1)
	got := inspectKeys(t, rdb, InspectOptions{}, cur, prev)
	for key, want := range map[string]struct {
		size int64
		pair string
	}{cur: {1, prev}, prev: {3, cur}} {
		k := got[key]
		// floor(3 * pttl(previous) / 3000) + 1, with pttl(previous) in (0, 3000)
		if k.Kind != kind.SlidingCounter || k.Size != want.size || k.PairKey != want.pair || k.Window != 3*time.Second ||
			k.Estimate == nil || *k.Estimate < 1 || *k.Estimate > 3 {
			t.Errorf("%s: %+v (estimate %v), want a sliding counter of %d in a 3s window, estimate 1..3, paired with %s", key, k, k.Estimate, want.size, want.pair)
		}
	}
}

// Laravel's ConcurrencyLimiter holds numbered slots <name>1..<name>N, each a string holding its
// holder's random id until released or expired: a held slot is a concurrency key of one.
func TestInspectLockSlots(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	slots := []string{"lib-reports1", "lib-reports2", "lib-reports3"}
	for _, id := range []string{"Kq3Zr8XbT1mN5pLw2YcD", "hFsJkQvBnRtWxZaPqLmE"} { // Str::random(20) may hold no digit
		evalFixture(t, rdb, "lock_slots.lua", slots, "lib-reports", 60, id)
	}
	evalFixture(t, rdb, "lock_slots.lua", []string{"lib-funnel:pdf1", "lib-funnel:pdf2"}, "lib-funnel:pdf", 60, "Zx81kLmQ2wErTyUiOp0a")
	evalFixture(t, rdb, "lock_slots.lua", []string{"lib-exports1", "lib-exports2"}, "lib-exports", 60, "Zx81kLmQ2wErTyUiOp0bq")
	evalFixture(t, rdb, "lock_slots.lua", []string{"lib-imports1", "lib-imports2"}, "lib-imports", 60, "Zx81kLmQ2wErTyUiOp0b")
	must(t, rdb.Set(ctx, "lib-session:abc", "Zx81kLmQ2wErTyUiOp0c", time.Minute).Err())
	must(t, rdb.Set(ctx, "lib-user1", "Zx81kLmQ2wErTyUiOp0d", 0).Err())
	got := inspectKeys(t, rdb, InspectOptions{}, "lib-reports1", "lib-reports2", "lib-funnel:pdf1",
		"lib-exports1", "lib-imports1", "lib-session:abc", "lib-user1")
	want := map[string]kind.Kind{
		"lib-reports1": kind.Concurrency, "lib-reports2": kind.Concurrency, // a neighbouring slot is held
		"lib-funnel:pdf1": kind.Concurrency,                        // slot 1 alone, named for a funnel
		"lib-exports1":    kind.Unknown,                            // slot 1 alone, no hint, a 21-character token: like any other
		"lib-imports1":    kind.Concurrency,                        // slot 1 alone, holding Laravel's Str::random(20)
		"lib-session:abc": kind.Unknown, "lib-user1": kind.Unknown, // no slot number; no TTL
	}
	for key, wantKind := range want {
		k := got[key]
		if k.Kind != wantKind || (wantKind == kind.Concurrency && (k.Size != 1 || k.TTL <= 0)) {
			t.Errorf("%s: %+v, want %s (a held slot: size 1, with a TTL)", key, k, wantKind)
		}
	}
}

// A sorted set of packed binary records scored by time (Redisson's RRateLimiter permits) is the
// library's own accounting: it gives a record's permits back only when it removes the record
// itself. Purge must leave it alone, whatever the unit flag: removed from outside, the permits
// never come back and the limiter refuses everyone for ever.
func TestPurgeLeavesPackedRecordsAlone(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	value, permits := "{lib-myLimiter}:value", "{lib-myLimiter}:permits"
	old := serverNow(t, rdb).Add(-10 * time.Minute).UnixMilli() // granted 10 minutes ago
	for i, id := range []string{"\x8f\x01\x00\xfe\x10\x22\x33\x44", "\x00\x11\x22\x33\x44\x55\x66\x77", "\xaa\xbb\xcc\xdd\xee\xff\x00\x01"} {
		evalFixture(t, rdb, "packed_permits.lua", []string{value, permits}, 10, 60000, 1, old+int64(i), id)
	}
	sel, err := Select(ctx, rdb, []string{permits}, SelectOptions{})
	must(t, err)
	for _, unit := range []scores.Unit{scores.UnitAuto, scores.UnitMillis} {
		for _, dry := range []bool{true, false} {
			res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: time.Minute, Batch: DefaultBatch, DryRun: dry, Unit: unit, Clock: ServerClock(rdb)})
			must(t, err)
			if len(res.Keys) != 1 || res.Keys[0].Removed != 0 || res.Keys[0].Skipped != SkipBinaryMembers {
				t.Errorf("unit %s dry %v: %+v, want skipped (%s)", unit, dry, res.Keys, SkipBinaryMembers)
			}
		}
	}
	if n := rdb.ZCard(ctx, permits).Val(); n != 3 {
		t.Fatalf("%d records left, want all 3", n)
	}
	if k := inspectKeys(t, rdb, InspectOptions{Stale: time.Minute}, permits)[permits]; k.Kind != kind.Unknown || k.Stale != 0 {
		t.Errorf("%s: %+v, want unknown, no stale count (purge skips it)", permits, k)
	}
}

// Laravel's cache RateLimiter (the throttle middleware) keeps a counter <key> and its window's
// end in <key>:timer (whole seconds). The timer is not a counter of 1.8 billion, nor a GCRA
// state: both keys are the window's counter, which is back to full when the timer says.
func TestInspectCounterWithTimer(t *testing.T) {
	rdb := singleServer(t).Client(t)
	counter := "laravel_cache_:lib-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"
	timer := counter + ":timer"
	for i := 0; i < 4; i++ {
		evalFixture(t, rdb, "counter_with_timer.lua", []string{counter, timer}, 60, serverNow(t, rdb).Unix(), 1)
	}
	now := serverNow(t, rdb)
	got := inspectKeys(t, rdb, InspectOptions{Limit: 3, HasLimit: true}, counter, timer)
	for key, pair := range map[string]string{counter: timer, timer: counter} {
		k := got[key]
		if k.Kind != kind.Counter || k.Size != 4 || k.PairKey != pair || k.FullAt == nil ||
			k.FullAt.Sub(now) < 55*time.Second || k.FullAt.Sub(now) > 61*time.Second || !hasFlag(k.Flags, FlagOverLimit) {
			t.Errorf("%s: %+v, want a counter of 4 paired with %s, full again in 55-61s, OVER_LIMIT at --limit 3", key, k, pair)
		}
	}
}
