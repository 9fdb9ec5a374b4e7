package keys

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
		if k.Kind != KindBucket || k.Size != 17 || k.Unit != UnitSeconds || k.PairKey != pair || k.OldestAge == nil ||
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
		if k.Kind != KindCounter || k.PairKey != "" {
			t.Errorf("%s: %+v, want a counter", key, k)
		}
	}
}
