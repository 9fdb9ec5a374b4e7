package keys

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/limiter"
)

// Reset is tested on the layouts inspect recognises, each driven as its library drives it
// (testdata/keys and testdata/limiters fixtures, or the library's own commands): a limiter is
// driven until it refuses, reset by the key an operator would name, and must then admit exactly
// as a fresh one does (its limit in a row, then a refusal), with every key of its state gone,
// while another user's state and other libraries' keys under the same pattern stay byte for byte.

// resetLayout is one library's limiter, for any user.
type resetLayout struct {
	name string
	// state lists every key of the user's limiter state once it has refused a request.
	state func(user string, now time.Time) []string
	// named is the key an operator names to reset it (one of state).
	named func(user string, now time.Time) string
	// limit is how many requests in a row a fresh limiter admits.
	limit int
	// prime brings a fresh limiter to where its whole state exists (nil: deciding does).
	prime func(t *testing.T, rdb redis.UniversalClient, user string, now time.Time)
	// decide asks for one request as the library does; true when admitted.
	decide func(t *testing.T, rdb redis.UniversalClient, user string, now time.Time) bool
}

// laravelHolder is a Laravel Str::random(20)-style lock holder: 20 letters and digits.
func laravelHolder(t *testing.T) string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}

func replyInt(t *testing.T, v any, i int) int64 {
	t.Helper()
	vs, ok := v.([]any)
	if !ok || len(vs) <= i {
		t.Fatalf("reply %v: want an array of at least %d", v, i+1)
	}
	n, ok := vs[i].(int64)
	if !ok {
		t.Fatalf("reply %v: element %d is not an integer", v, i)
	}
	return n
}

var requestSeq struct {
	sync.Mutex
	n int
}

func nextJobID() string {
	requestSeq.Lock()
	defer requestSeq.Unlock()
	requestSeq.n++
	return "job-" + strconv.Itoa(requestSeq.n)
}

func secondsWithFraction(now time.Time) string {
	return strconv.FormatFloat(float64(now.UnixMicro())/1e6, 'f', 6, 64)
}

// upstashWindow is the sliding window of the upstash-style layout.
const upstashWindow = 10 * time.Second

func upstashKey(user string, at time.Time) string {
	return "rst:@upstash/ratelimit:{" + user + "}:" + strconv.FormatInt(at.UnixMilli()/upstashWindow.Milliseconds(), 10)
}

// shipped is limitctl's own script for a limiter kind, on the Lua strategy.
func shipped(t *testing.T, rdb redis.UniversalClient, kind limiter.Kind, key string, now time.Time) bool {
	t.Helper()
	cfg := limiter.Config{Limit: 3, Window: time.Minute, StaleAfter: time.Minute, Rate: 3.0 / 60, Burst: 3}
	lim, err := limiter.New(kind, limiter.Lua, rdb, cfg)
	must(t, err)
	d, err := lim.Acquire(context.Background(), key, now)
	must(t, err)
	return d.Allowed
}

func resetLayouts() []resetLayout {
	eval := func(t *testing.T, rdb redis.UniversalClient, name string, keys []string, args ...any) any {
		t.Helper()
		return evalFixture(t, rdb, name, keys, args...)
	}
	springKeys := func(u string) []string {
		return []string{"rst:request_rate_limiter.{" + u + "}.timestamp", "rst:request_rate_limiter.{" + u + "}.tokens"}
	}
	slots := func(u string) []string {
		return []string{"rst:{funnel-" + u + "}1", "rst:{funnel-" + u + "}2", "rst:{funnel-" + u + "}3"}
	}
	limitsKeys := func(u string) (previous, current string) {
		current = "rst:LIMITS:{LIMITER/" + u + "/3/3/second}"
		return current + "/-1", current
	}
	one := func(key func(u string) string) func(string, time.Time) []string {
		return func(u string, _ time.Time) []string { return []string{key(u)} }
	}
	named := func(key func(u string) string) func(string, time.Time) string {
		return func(u string, _ time.Time) string { return key(u) }
	}
	fixedWindowKey := func(u string, now time.Time) string { return limiter.WindowKey("rst:fw:"+u, now, time.Minute) }
	upstashFixed := func(u string, now time.Time) string {
		return "rst:@upstash/ratelimit:fw:" + u + ":" + strconv.FormatInt(now.UnixMilli()/60000, 10)
	}
	return []resetLayout{
		{name: "spring two strings", limit: 5,
			state: func(u string, _ time.Time) []string { return springKeys(u) },
			named: func(u string, _ time.Time) string { return springKeys(u)[1] },
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				k := springKeys(u)
				return replyInt(t, eval(t, rdb, "spring_gateway_two_keys.lua", []string{k[1], k[0]}, 1, 5, now.Unix(), 1), 0) == 1
			}},
		{name: "bucket hash", limit: 5,
			state: one(func(u string) string { return "rst:rrl-hash.{" + u + "}" }),
			named: named(func(u string) string { return "rst:rrl-hash.{" + u + "}" }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return replyInt(t, eval(t, rdb, "../limiters/token_bucket_tokens.lua", []string{"rst:rrl-hash.{" + u + "}"}, 1, 5, now.UnixMilli(), 1), 0) == 1
			}},
		// Laravel's cache RateLimiter::hit is three commands, not a script: add the timer, add
		// the counter at 0, increment; the caller compares the hits with its maximum.
		{name: "laravel counter and timer", limit: 3,
			state: func(u string, _ time.Time) []string {
				return []string{"rst:laravel_cache_:" + u, "rst:laravel_cache_:" + u + ":timer"}
			},
			named: named(func(u string) string { return "rst:laravel_cache_:" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				ctx, key := context.Background(), "rst:laravel_cache_:"+u
				must(t, rdb.SetNX(ctx, key+":timer", now.Unix()+60, time.Minute).Err())
				must(t, rdb.SetNX(ctx, key, 0, time.Minute).Err())
				hits, err := rdb.IncrBy(ctx, key, 1).Result()
				must(t, err)
				return hits <= 3
			}},
		// The operator names the middle slot; the limiter is every slot.
		{name: "laravel lock slots", limit: 3,
			state: func(u string, _ time.Time) []string { return slots(u) },
			named: func(u string, _ time.Time) string { return slots(u)[1] },
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, _ time.Time) bool {
				return eval(t, rdb, "lock_slots.lua", slots(u), "rst:{funnel-"+u+"}", 60, laravelHolder(t)) != nil
			}},
		// Two requests in the previous window, then the current one: both windows' counters.
		{name: "upstash sliding pair", limit: 4,
			state: func(u string, now time.Time) []string {
				return []string{upstashKey(u, now), upstashKey(u, now.Add(-upstashWindow))}
			},
			named: func(u string, now time.Time) string { return upstashKey(u, now) },
			prime: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) {
				before := now.Add(-upstashWindow)
				for i := 0; i < 2; i++ {
					eval(t, rdb, "../limiters/sliding_two_counters.lua", []string{upstashKey(u, before), upstashKey(u, before.Add(-upstashWindow)), "rst:{" + u + "}:limit"},
						4, before.UnixMilli(), upstashWindow.Milliseconds(), 1)
				}
			},
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				reply := eval(t, rdb, "../limiters/sliding_two_counters.lua", []string{upstashKey(u, now), upstashKey(u, now.Add(-upstashWindow)), "rst:{" + u + "}:limit"},
					4, now.UnixMilli(), upstashWindow.Milliseconds(), 1)
				return replyInt(t, reply, 0) >= 0
			}},
		// Redisson's RRateLimiter: the permits left, and the grants that give them back.
		{name: "redisson permits", limit: 3,
			state: func(u string, _ time.Time) []string {
				return []string{"rst:{redisson-" + u + "}:value", "rst:{redisson-" + u + "}:permits"}
			},
			named: named(func(u string) string { return "rst:{redisson-" + u + "}:value" }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				id := make([]byte, 8)
				rand.Read(id)
				return eval(t, rdb, "packed_permits.lua", []string{"rst:{redisson-" + u + "}:value", "rst:{redisson-" + u + "}:permits"},
					3, 60000, 1, now.UnixMilli(), string(id)) == nil
			}},
		{name: "laravel duration hash", limit: 3,
			state: one(func(u string) string { return "rst:mailgun-" + u }),
			named: named(func(u string) string { return "rst:mailgun-" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return replyInt(t, eval(t, rdb, "window_hash.lua", []string{"rst:mailgun-" + u}, secondsWithFraction(now), now.Unix(), 60, 3), 0) == 1
			}},
		{name: "sidekiq threshold list", limit: 3,
			state: one(func(u string) string { return "rst:throttled:" + u + ":threshold" }),
			named: named(func(u string) string { return "rst:throttled:" + u + ":threshold" }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return eval(t, rdb, "timestamp_list.lua", []string{"rst:throttled:" + u + ":threshold"}, 3, 60, secondsWithFraction(now)) == int64(0)
			}},
		{name: "limits moving window list", limit: 3,
			state: one(func(u string) string { return "rst:LIMITS:LIMITER/" + u + "/3/1/minute" }),
			named: named(func(u string) string { return "rst:LIMITS:LIMITER/" + u + "/3/1/minute" }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return eval(t, rdb, "../limiters/moving_window_list.lua", []string{"rst:LIMITS:LIMITER/" + u + "/3/1/minute"}, secondsWithFraction(now), 3, 60, 1) != nil
			}},
		// The backlog hash only counts throttled jobs; the limiter is the in-progress set.
		{name: "sidekiq deadline set", limit: 3,
			state: one(func(u string) string { return "rst:{" + u + "}:in_progress" }),
			named: named(func(u string) string { return "rst:{" + u + "}:in_progress" }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return eval(t, rdb, "../limiters/concurrency_deadlines.lua", []string{"rst:{" + u + "}:in_progress", "rst:{" + u + "}:backlog"},
					nextJobID(), 3, 60, secondsWithFraction(now)) == int64(0)
			}},
		{name: "redis_rate gcra", limit: 3,
			state: one(func(u string) string { return "rst:rate:" + u }),
			named: named(func(u string) string { return "rst:rate:" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, _ time.Time) bool {
				return replyInt(t, eval(t, rdb, "../limiters/gcra_server_time.lua", []string{"rst:rate:" + u}, 3, 1, 60, 1), 0) > 0
			}},
		{name: "rate-limiter-flexible counter", limit: 3,
			state: one(func(u string) string { return "rst:rlflx:login:" + u }),
			named: named(func(u string) string { return "rst:rlflx:login:" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, _ time.Time) bool {
				return replyInt(t, eval(t, rdb, "../limiters/fixed_window_first_hit.lua", []string{"rst:rlflx:login:" + u}, 1, 60), 0) <= 3
			}},
		{name: "upstash fixed window", limit: 3,
			state: func(u string, now time.Time) []string { return []string{upstashFixed(u, now)} },
			named: upstashFixed,
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				reply := eval(t, rdb, "../limiters/fixed_window_counter.lua", []string{upstashFixed(u, now)}, 3, 60000, 1)
				return replyInt(t, reply, 0) <= replyInt(t, reply, 1)
			}},
		{name: "limitctl concurrency", limit: 3,
			state: one(func(u string) string { return "rst:conc:" + u }),
			named: named(func(u string) string { return "rst:conc:" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return shipped(t, rdb, limiter.Concurrency, "rst:conc:"+u, now)
			}},
		{name: "limitctl fixed window", limit: 3,
			state: func(u string, now time.Time) []string { return []string{fixedWindowKey(u, now)} },
			named: fixedWindowKey,
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return shipped(t, rdb, limiter.FixedWindow, "rst:fw:"+u, now)
			}},
		{name: "limitctl sliding window", limit: 3,
			state: one(func(u string) string { return "rst:sw:" + u }),
			named: named(func(u string) string { return "rst:sw:" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return shipped(t, rdb, limiter.SlidingWindow, "rst:sw:"+u, now)
			}},
		{name: "limitctl token bucket", limit: 3,
			state: one(func(u string) string { return "rst:tb:" + u }),
			named: named(func(u string) string { return "rst:tb:" + u }),
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, now time.Time) bool {
				return shipped(t, rdb, limiter.TokenBucket, "rst:tb:"+u, now)
			}},
		// Last: its previous counter lives under three seconds once renamed. limits renames the current counter to the previous one once less than a window of it
		// is left: three requests, then a wait into the next window, make both.
		{name: "limits renamed pair", limit: 3,
			state: func(u string, _ time.Time) []string { p, c := limitsKeys(u); return []string{c, p} },
			named: func(u string, _ time.Time) string { _, c := limitsKeys(u); return c },
			prime: func(t *testing.T, rdb redis.UniversalClient, u string, _ time.Time) {
				p, c := limitsKeys(u)
				for i := 0; i < 3; i++ {
					eval(t, rdb, "sliding_rename_pair.lua", []string{p, c}, 3, 3, 1)
				}
				time.Sleep(3300 * time.Millisecond)
			},
			decide: func(t *testing.T, rdb redis.UniversalClient, u string, _ time.Time) bool {
				p, c := limitsKeys(u)
				return eval(t, rdb, "sliding_rename_pair.lua", []string{p, c}, 3, 3, 1) != nil
			}},
	}
}

// exhaust drives user's limiter until it refuses, and checks its whole state exists.
func (l resetLayout) exhaust(t *testing.T, rdb redis.UniversalClient, user string, now time.Time) {
	t.Helper()
	if l.prime != nil {
		l.prime(t, rdb, user, now)
	}
	for i := 0; ; i++ {
		if i > l.limit+5 {
			t.Fatalf("%s: %s's limiter admits for ever", l.name, user)
		}
		if !l.decide(t, rdb, user, now) {
			break
		}
	}
	for _, k := range l.state(user, now) {
		if n, _ := rdb.Exists(context.Background(), k).Result(); n != 1 {
			t.Fatalf("%s: %s missing once the limiter refused: the layout is not what the test thinks", l.name, k)
		}
	}
}

// admitsAsFresh checks user's limiter admits exactly its limit in a row, then refuses.
func (l resetLayout) admitsAsFresh(t *testing.T, rdb redis.UniversalClient, user string, now time.Time) {
	t.Helper()
	for i := 0; i < l.limit; i++ {
		if !l.decide(t, rdb, user, now) {
			t.Errorf("%s: request %d of %d after the reset refused: the reset left state behind", l.name, i+1, l.limit)
			return
		}
	}
	if l.decide(t, rdb, user, now) {
		t.Errorf("%s: request %d after the reset admitted: a fresh limiter refuses it", l.name, l.limit+1)
	}
}

// snapshot is every existing key's serialized value, to compare byte for byte.
func snapshot(t *testing.T, rdb redis.UniversalClient, keys []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		v, err := rdb.Dump(context.Background(), k).Result()
		if err == redis.Nil {
			continue
		}
		must(t, err)
		out[k] = v
	}
	return out
}

func (want snapshotMap) unchanged(t *testing.T, rdb redis.UniversalClient, what string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	got := snapshot(t, rdb, keys)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s %s was touched by the reset", what, k)
		}
	}
}

type snapshotMap map[string]string

// runReset resets args as the command does: select, plan, delete.
func runReset(t *testing.T, rdb redis.UniversalClient, opts ResetOptions, args ...string) ResetResult {
	t.Helper()
	ctx := context.Background()
	if opts.Batch == 0 {
		opts.Batch = DefaultResetBatch
	}
	opts.Clock = ServerClock(rdb)
	sel, err := Select(ctx, rdb, args, SelectOptions{})
	must(t, err)
	plan, err := PlanReset(ctx, rdb, sel, opts)
	must(t, err)
	res, err := Reset(ctx, rdb, plan, opts)
	must(t, err)
	return res
}

// freshWindowNow waits until the upstash-style window has most of its length ahead, so no
// window index rolls over while a test runs, and returns the server's time.
func freshWindowNow(t *testing.T, rdb redis.UniversalClient) time.Time {
	t.Helper()
	now := serverNow(t, rdb)
	if r := now.UnixMilli() % upstashWindow.Milliseconds(); r > 3000 {
		time.Sleep(time.Duration(upstashWindow.Milliseconds()-r+50) * time.Millisecond)
		now = serverNow(t, rdb)
	}
	return now
}

func TestResetEachLayoutByTheKeyAnOperatorNames(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	for _, l := range resetLayouts() {
		t.Run(l.name, func(t *testing.T) {
			now := freshWindowNow(t, rdb)
			user, other := "u42-"+strings.ReplaceAll(l.name, " ", "-"), "u43-"+strings.ReplaceAll(l.name, " ", "-")
			l.decide(t, rdb, other, now) // another user's state, as it stands after one request
			l.exhaust(t, rdb, user, now)
			others := snapshotMap(snapshot(t, rdb, l.state(other, now)))
			if len(others) == 0 {
				t.Fatalf("another user's request left no key")
			}

			state, named := l.state(user, now), l.named(user, now)
			dry := runReset(t, rdb, ResetOptions{DryRun: true}, named)
			if n, _ := rdb.Exists(ctx, state...).Result(); n != int64(len(state)) {
				t.Fatalf("the dry run deleted %d of %d keys", int64(len(state))-n, len(state))
			}
			res := runReset(t, rdb, ResetOptions{}, named)
			var partners []string
			for _, k := range state {
				if k != named {
					partners = append(partners, k)
				}
			}
			slices.Sort(partners)
			for _, r := range []ResetResult{dry, res} {
				if len(r.Keys) != 1 || r.Keys[0].Key != named || !r.Keys[0].Deleted || r.Keys[0].Skipped != "" ||
					!slices.Equal(r.Keys[0].With, append([]string{}, partners...)) || r.TotalDeleted != int64(len(state)) {
					t.Fatalf("dry run %v: %+v, want %s deleted with %v (%d keys)", r.DryRun, r, named, partners, len(state))
				}
			}
			if n, _ := rdb.Exists(ctx, state...).Result(); n != 0 {
				t.Fatalf("%d keys of the state left after the reset", n)
			}
			l.admitsAsFresh(t, rdb, user, now)
			others.unchanged(t, rdb, "another user's key")
		})
	}
}

// Every layout's limiter of one user, reset by a pattern on a single server and on a cluster
// (keys spread over three masters; Laravel's counter and timer lie in different slots), with
// another user's limiters and other libraries' keys matched by the same pattern.
func TestResetByPatternOnASingleServerAndACluster(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			rdb, ctx := tg.rdb, context.Background()
			now := freshWindowNow(t, rdb)
			user, other := "p44-"+tg.name, "p45-"+tg.name
			layouts := resetLayouts()
			var state, others []string
			for _, l := range layouts {
				l.decide(t, rdb, other, now)
				l.exhaust(t, rdb, user, now)
				state = append(state, l.state(user, now)...)
				others = append(others, l.state(other, now)...)
			}
			othersBefore := snapshotMap(snapshot(t, rdb, others))
			// Other libraries' keys the pattern matches, of no kind limitctl recognises: a session
			// hash, a leaderboard, a token without a slot's TTL beside the lock's slots.
			unknown := []string{"rst:session:" + user, "rst:leaderboard:" + user, "rst:{funnel-" + user + "}9"}
			must(t, rdb.HSet(ctx, unknown[0], "name", "Ada", "theme", "dark").Err())
			must(t, rdb.ZAdd(ctx, unknown[1], redis.Z{Score: 17, Member: "ada"}, redis.Z{Score: 12, Member: "bob"}).Err())
			must(t, rdb.Set(ctx, unknown[2], laravelHolder(t), 0).Err())
			unknownBefore := snapshotMap(snapshot(t, rdb, unknown))

			res := runReset(t, rdb, ResetOptions{Batch: 7}, "rst:*"+user+"*")
			if res.TotalDeleted != int64(len(state)) {
				t.Errorf("deleted %d keys, want the %d of %s's limiters", res.TotalDeleted, len(state), user)
			}
			deleted, skipped := map[string]bool{}, map[string]string{}
			for _, k := range res.Keys {
				if k.Deleted {
					deleted[k.Key] = true
				}
				for _, w := range k.With {
					deleted[w] = true
				}
				if k.Skipped != "" {
					skipped[k.Key] = k.Skipped
				}
				if k.Node == "" {
					t.Errorf("%s: no node", k.Key)
				}
			}
			for _, k := range state {
				if !deleted[k] {
					t.Errorf("%s not reported deleted", k)
				}
			}
			for _, k := range unknown {
				if skipped[k] != SkipUnknownKind {
					t.Errorf("%s: skipped %q, want %q", k, skipped[k], SkipUnknownKind)
				}
			}
			if n, _ := rdb.Exists(ctx, state...).Result(); n != 0 {
				t.Errorf("%d keys of %s's limiters left", n, user)
			}
			unknownBefore.unchanged(t, rdb, "another library's key")
			othersBefore.unchanged(t, rdb, "another user's key")
			for _, l := range layouts {
				l.admitsAsFresh(t, rdb, user, now)
			}
			if tg.name == "cluster" {
				// The pair that needs one UNLINK per key: its keys lie in different slots.
				cc := rdb.(*redis.ClusterClient)
				counter := "rst:laravel_cache_:" + user
				a, _ := cc.ClusterKeySlot(ctx, counter).Result()
				b, _ := cc.ClusterKeySlot(ctx, counter+":timer").Result()
				if a == b {
					t.Errorf("%s and its timer share slot %d: the cross-slot deletion is not exercised", counter, a)
				}
				nodes := map[string]bool{}
				for _, k := range res.Keys {
					nodes[k.Node] = true
				}
				if len(nodes) != 3 {
					t.Errorf("keys reset on %d masters, want all 3", len(nodes))
				}
			}

			// Forced, the unknown keys go too.
			forced := runReset(t, rdb, ResetOptions{Force: true}, unknown...)
			if forced.TotalDeleted != 3 {
				t.Errorf("--force deleted %d of the 3 unknown keys: %+v", forced.TotalDeleted, forced)
			}
		})
	}
}

// A named key that does not exist, and one that vanishes between the plan and the deletion, are
// skipped with their reason; nothing else happens.
func TestResetMissingAndVanishedKeys(t *testing.T) {
	rdb := singleServer(t).Client(t)
	ctx := context.Background()
	res := runReset(t, rdb, ResetOptions{}, "rst:never-there")
	if len(res.Keys) != 1 || res.Keys[0].Skipped != SkipNoSuchKey || res.Keys[0].Deleted || res.TotalDeleted != 0 {
		t.Errorf("%+v, want skipped: %s", res, SkipNoSuchKey)
	}
	must(t, rdb.Set(ctx, "rst:vanishing", 3, time.Minute).Err())
	opts := ResetOptions{Batch: DefaultResetBatch, Clock: ServerClock(rdb)}
	sel, err := Select(ctx, rdb, []string{"rst:vanishing"}, SelectOptions{})
	must(t, err)
	plan, err := PlanReset(ctx, rdb, sel, opts)
	must(t, err)
	must(t, rdb.Del(ctx, "rst:vanishing").Err())
	res, err = Reset(ctx, rdb, plan, opts)
	must(t, err)
	if len(res.Keys) != 1 || res.Keys[0].Deleted || res.Keys[0].Skipped != SkipVanished || res.TotalDeleted != 0 {
		t.Errorf("%+v, want skipped: %s", res, SkipVanished)
	}
}

// unlinkHook counts the round trips that delete, and can cancel a context after one, as Ctrl-C
// would between batches.
type unlinkHook struct {
	mu       sync.Mutex
	batches  [][]string // the keys each pipeline deleted
	cancelAt int
	cancel   context.CancelFunc
}

func (h *unlinkHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *unlinkHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *unlinkHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		var keys []string
		for _, c := range cmds {
			if c.Name() == "unlink" {
				for _, a := range c.Args()[1:] {
					keys = append(keys, fmt.Sprint(a))
				}
			}
		}
		if len(keys) > 0 {
			h.mu.Lock()
			h.batches = append(h.batches, keys)
			if len(h.batches) == h.cancelAt && h.cancel != nil {
				h.cancel()
			}
			h.mu.Unlock()
		}
		return err
	}
}

// Batches hold at most --batch keys, a limiter's keys always together (a pair is never split
// between two round trips), and a cancelled context stops between batches with what was done.
func TestResetBatchesKeepGroupsWholeAndStopWhenCancelled(t *testing.T) {
	s := singleServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	now := serverNow(t, rdb)
	var all []string
	for i := 0; i < 5; i++ {
		tokens := fmt.Sprintf("rst:batch:request_rate_limiter.{u%d}.tokens", i)
		stamp := fmt.Sprintf("rst:batch:request_rate_limiter.{u%d}.timestamp", i)
		evalFixture(t, rdb, "spring_gateway_two_keys.lua", []string{tokens, stamp}, 1, 5, now.Unix(), 1)
		must(t, rdb.Set(ctx, fmt.Sprintf("rst:batch:counter-%c", 'a'+i), 2, time.Minute).Err())
		all = append(all, tokens, stamp)
	}
	hook := &unlinkHook{}
	rdb.AddHook(hook)
	opts := ResetOptions{Batch: 3, Clock: ServerClock(rdb)}
	sel, err := Select(ctx, rdb, []string{"rst:batch:*"}, SelectOptions{})
	must(t, err)
	plan, err := PlanReset(ctx, rdb, sel, opts)
	must(t, err)
	if plan.Deletes() != 15 || len(plan.Keys) != 10 {
		t.Fatalf("plan of %d entries deleting %d keys, want 10 entries (5 pairs, 5 counters) deleting 15", len(plan.Keys), plan.Deletes())
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hook.cancelAt, hook.cancel = 2, cancel
	res, err := Reset(cctx, rdb, plan, opts)
	must(t, err)
	if !res.Interrupted || len(hook.batches) != 2 {
		t.Fatalf("interrupted %v after %d batches, want a stop after the 2nd", res.Interrupted, len(hook.batches))
	}
	left, _ := rdb.Exists(ctx, append(all, "rst:batch:counter-a", "rst:batch:counter-b", "rst:batch:counter-c", "rst:batch:counter-d", "rst:batch:counter-e")...).Result()
	if res.TotalDeleted+left != 15 {
		t.Errorf("report says %d deleted, %d keys left: %d, want 15", res.TotalDeleted, left, res.TotalDeleted+left)
	}
	for _, b := range hook.batches {
		if len(b) > 3 {
			t.Errorf("a batch of %d keys (%v), want at most 3", len(b), b)
		}
		for _, k := range b {
			if base, ok := strings.CutSuffix(k, ".tokens"); ok && !slices.Contains(b, base+".timestamp") {
				t.Errorf("%s deleted without its timestamp in the same batch: %v", k, b)
			}
		}
	}
	// The rest, uncancelled.
	hook.cancel = nil
	res, err = Reset(ctx, rdb, plan, opts)
	must(t, err)
	if n, _ := rdb.Exists(ctx, all...).Result(); n != 0 {
		t.Errorf("%d keys left after the full run", n)
	}
}
