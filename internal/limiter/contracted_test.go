package limiter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

func contractConfig(t *testing.T, src string, spec contract.Spec, k limiter.Kind) limiter.Config {
	t.Helper()
	c, err := contract.Compile(spec, limiter.DefaultContract(k))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(k, limiter.Custom)
	cfg.CustomSource, cfg.Contract = src, c
	return cfg
}

// A script that records what it was called with in its first key, so the test sees KEYS and
// ARGV as Redis did.
const echoScript = `
local words = {#KEYS, #ARGV}
for i = 1, #KEYS do words[#words + 1] = KEYS[i] end
for i = 1, #ARGV do words[#words + 1] = ARGV[i] end
redis.call('SET', KEYS[1], table.concat(words, '|'), 'PX', 10000)
return {#KEYS, #ARGV}`

func TestContractReachesRedisAsWritten(t *testing.T) {
	rdb := server(t).Client(t)
	key := keyFor(t)
	spec := contract.Spec{Keys: `{key}:{window_index} {key}:{prev_window_index} ""`, Args: `{limit} "" "a b" {window_s}`, Allowed: "reply[1] == 3 and reply[2] == 4"}
	lim, err := limiter.New(limiter.FixedWindow, limiter.Custom, rdb, contractConfig(t, echoScript, spec, limiter.FixedWindow))
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_700_000_000_500)
	d, err := lim.Acquire(context.Background(), key, now)
	if err != nil || !d.Allowed {
		t.Fatalf("allowed=%v err=%v", d.Allowed, err)
	}
	got, err := rdb.Get(context.Background(), key+":1700000000").Result()
	if err != nil {
		t.Fatal(err)
	}
	// Two keys with the window indexes, an empty key, an empty argument and one with a space.
	if want := "3|4|" + key + ":1700000000|" + key + ":1699999999||10||a b|1"; got != want {
		t.Fatalf("the script saw %q, want %q", got, want)
	}
}

func TestContractReadsEveryReplyShape(t *testing.T) {
	rdb := server(t).Client(t)
	cases := []struct {
		name, body, allowed string
		want                bool
	}{
		{"bare integer", "return 1", "reply == 1", true},
		{"lua true is 1", "return true", "reply == 1", true},
		{"lua false is nil", "return false", "reply ~= false", false},
		{"nil inside an array", "return {1, false, 3}", "reply[2] == false and reply[3] == 3", true},
		{"a float is a string", "return {1, tostring(0.25)}", "tonumber(reply[2]) == 0.25", true},
		{"a float number truncates", "return 2.9", "reply == 2", true},
		{"redis_rate style", `return {0, 0, "1.5", "-1"}`, "reply[1] > 0", false},
		{"nested", "return {1, {2, {'deep'}}}", "reply[2][2][1] == 'deep'", true},
		{"status", "return redis.status_reply('OK')", "reply == 'OK'", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "redis.call('SET', KEYS[1], 1, 'PX', 1000)\n" + c.body
			lim, err := limiter.New(limiter.SlidingWindow, limiter.Custom, rdb,
				contractConfig(t, src, contract.Spec{Allowed: c.allowed}, limiter.SlidingWindow))
			if err != nil {
				t.Fatal(err)
			}
			d, err := lim.Acquire(context.Background(), keyFor(t), time.Now())
			if err != nil || d.Allowed != c.want {
				t.Fatalf("allowed=%v err=%v, want %v", d.Allowed, err, c.want)
			}
		})
	}
}

func TestContractErrorsAreReplyErrors(t *testing.T) {
	rdb := server(t).Client(t)
	// A limits-style script replies a bare 1 or nil: the default reply[1] == 1 cannot index it.
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Custom, rdb, contractConfig(t, "return 1", contract.Spec{}, limiter.SlidingWindow))
	if err != nil {
		t.Fatal(err)
	}
	_, err = lim.Acquire(context.Background(), keyFor(t), time.Now())
	if !limiter.IsReplyError(err) || !strings.Contains(err.Error(), "reply that is an integer") {
		t.Fatalf("got %v, want a reply error saying the reply is an integer", err)
	}
}

func TestContractReleaseAndNoscriptFallback(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	key := keyFor(t)
	// sidekiq-throttled style: a second key, the member's score a deadline, 1 means throttled.
	src := `
local now = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HINCRBY', KEYS[2], 'acquired', 1)
redis.call('EXPIRE', KEYS[1], ARGV[3]); redis.call('EXPIRE', KEYS[2], ARGV[3])
return 0`
	spec := contract.Spec{Keys: "{key}:in_progress {key}:backlog", Args: "{member} {limit} {stale_after_s} {now_s}", Allowed: "reply == 0", Release: "ZREM {key}:in_progress {member}"}
	lim, err := limiter.New(limiter.Concurrency, limiter.Custom, rdb, contractConfig(t, src, spec, limiter.Concurrency))
	if err != nil {
		t.Fatal(err)
	}
	d, err := lim.Acquire(ctx, key, time.Now())
	if err != nil || !d.Allowed || d.Member == "" {
		t.Fatalf("acquire: %+v %v", d, err)
	}
	if n, _ := rdb.ZCard(ctx, key+":in_progress").Result(); n != 1 {
		t.Fatalf("in progress: %d", n)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := lim.Release(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.ZCard(ctx, key+":in_progress").Result(); n != 0 {
		t.Fatalf("after release: %d members", n)
	}
	if _, err := lim.Acquire(ctx, key, time.Now()); err != nil {
		t.Fatalf("after SCRIPT FLUSH the call must fall back to EVAL: %v", err)
	}
}

// A release that is a script of its own (--script-release-file): called with its own KEYS and
// ARGV, where {reply} is the slot the acquire answered it took.
func TestContractReleaseScript(t *testing.T) {
	rdb := server(t).Client(t)
	ctx := context.Background()
	key := keyFor(t)
	acquire := `
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', 10000) then return KEYS[i] end
end
return false`
	release := `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`
	spec := contract.Spec{Keys: "{key}{slot}", Args: "{member}", Allowed: "reply ~= false",
		ReleaseFile: "release.lua", ReleaseScript: release, ReleaseKeys: "{reply}", ReleaseArgs: "{member}"}
	lim, err := limiter.New(limiter.Concurrency, limiter.Custom, rdb, contractConfig(t, acquire, spec, limiter.Concurrency))
	if err != nil {
		t.Fatal(err)
	}
	d, err := lim.Acquire(ctx, key, time.Now())
	if err != nil || !d.Allowed {
		t.Fatalf("acquire: %v %v", d.Allowed, err)
	}
	if n := rdb.Exists(ctx, key+"1").Val(); n != 1 {
		t.Fatal("slot 1 not taken")
	}
	rdb.ScriptFlush(ctx) // the release script falls back to EVAL too
	if err := lim.Release(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, key+"1").Val(); n != 0 {
		t.Fatal("the release script did not free slot 1")
	}
}
