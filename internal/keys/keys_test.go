package keys

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/keys/kind"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// One single server and one 3-master cluster for the whole package (redistest's shared ones):
// a cluster takes seconds to form. Each test writes under its own key prefix.
func TestMain(m *testing.M) { redistest.Main(m) }

func singleServer(t *testing.T) *redistest.Server { return redistest.Shared(t) }

func sharedCluster(t *testing.T) *redistest.Cluster { return redistest.SharedCluster(t) }

// target is a server the exactness tests run on.
type target struct {
	name string
	rdb  redis.UniversalClient
}

func targets(t *testing.T) []target {
	t.Helper()
	s := singleServer(t)
	c := sharedCluster(t)
	sc := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), Protocol: 2})
	t.Cleanup(func() { sc.Close(); cc.Close() })
	return []target{{"single", sc}, {"cluster", cc}}
}

// fixture is a set of limiter keys with known contents, written relative to fixedNow.
type fixture struct {
	prefix string
	want   map[string]KeyInfo // keyed by key; Node filled in by the test
	fresh  map[string][]string
	stale  map[string]int64
}

// zsetSpec is one sorted set: members with ages, scored in unit.
type zsetSpec struct {
	key   string
	unit  scores.Unit
	ttl   time.Duration
	fresh map[string]time.Duration
	stale map[string]time.Duration
}

const staleAfter = 10 * time.Minute

// seed writes the fixture: sorted sets with fresh and stale members in s, ms, us and ns
// scores, counters with and without TTL, a token bucket, a list, a plain string, a sorted set
// of names and one of ranks. Expectations hold for --stale 10m and --limit 4.
func seed(t *testing.T, rdb redis.UniversalClient, prefix string) fixture {
	t.Helper()
	ctx := context.Background()
	f := fixture{prefix: prefix, want: map[string]KeyInfo{}, fresh: map[string][]string{}, stale: map[string]int64{}}
	k := func(s string) string { return prefix + ":" + s }
	age := func(d time.Duration) *time.Duration { return &d }

	bigStale := map[string]time.Duration{}
	for i := 0; i < 2500; i++ {
		bigStale["old-"+strconv.Itoa(i)] = 11*time.Minute + time.Duration(i)*time.Millisecond
	}
	sets := []struct {
		spec zsetSpec
		want KeyInfo
	}{
		{zsetSpec{k("conc:ms"), scores.UnitMillis, time.Hour,
			map[string]time.Duration{"req-1": time.Second, "req-2": 2 * time.Second, "req-3": 3 * time.Second},
			map[string]time.Duration{"req-4": 20 * time.Minute, "req-5": 30 * time.Minute}},
			KeyInfo{Kind: kind.Concurrency, Size: 5, OldestAge: age(30 * time.Minute), NewestAge: age(time.Second), Stale: 2,
				Flags: []Flag{FlagStale, FlagOverLimit}}},
		{zsetSpec{k("sliding:s"), scores.UnitSeconds, 2 * time.Hour,
			map[string]time.Duration{"r1": 5500 * time.Millisecond, "r2": 15 * time.Second, "r3": 25 * time.Second},
			map[string]time.Duration{"r4": 11 * time.Minute, "r5": 12 * time.Minute, "r6": 13 * time.Minute, "r7": 14 * time.Minute}},
			KeyInfo{Kind: kind.WindowLog, Size: 7, OldestAge: age(14 * time.Minute), NewestAge: age(5500 * time.Millisecond), Stale: 4,
				Flags: []Flag{FlagStale, FlagOverLimit}}},
		// No naming hint: the spread (50m) is most of the horizon (TTL 1h + 10s): a window log.
		{zsetSpec{k("q7:us"), scores.UnitMicros, time.Hour,
			map[string]time.Duration{"u-1": 10 * time.Second},
			map[string]time.Duration{"u-2": 40 * time.Minute, "u-3": 50 * time.Minute}},
			KeyInfo{Kind: kind.WindowLog, Size: 3, OldestAge: age(50 * time.Minute), NewestAge: age(10 * time.Second), Stale: 2,
				Flags: []Flag{FlagStale}}},
		// No naming hint: members within 2s against a 1h TTL: a concurrency set.
		{zsetSpec{k("q8:ms"), scores.UnitMillis, time.Hour,
			map[string]time.Duration{"c-1": time.Second, "c-2": 2 * time.Second, "c-3": 3 * time.Second}, nil},
			KeyInfo{Kind: kind.Concurrency, Size: 3, OldestAge: age(3 * time.Second), NewestAge: age(time.Second), Flags: []Flag{}}},
		{zsetSpec{k("users"), scores.UnitMillis, 0,
			map[string]time.Duration{"alice": time.Minute, "bob": 2 * time.Minute}, nil},
			KeyInfo{Kind: kind.Unknown, Size: 2, OldestAge: age(2 * time.Minute), NewestAge: age(time.Minute), Flags: []Flag{FlagNoTTL}}},
		{zsetSpec{k("big:log"), scores.UnitMillis, time.Hour,
			map[string]time.Duration{"new-1": time.Second, "new-2": 2 * time.Second, "new-3": 3 * time.Second}, bigStale},
			KeyInfo{Kind: kind.WindowLog, Size: 2503, OldestAge: age(11*time.Minute + 2499*time.Millisecond), NewestAge: age(time.Second), Stale: 2500,
				Flags: []Flag{FlagStale, FlagOverLimit}}},
		{zsetSpec{k("ns:log"), scores.UnitNanos, time.Hour,
			map[string]time.Duration{"n-1": time.Second},
			map[string]time.Duration{"n-2": 20 * time.Minute}},
			KeyInfo{Kind: kind.WindowLog, Size: 2, OldestAge: age(20 * time.Minute), NewestAge: age(time.Second), Stale: 1,
				Flags: []Flag{FlagStale}}},
	}
	for _, s := range sets {
		var zs []redis.Z
		for m, a := range s.spec.fresh {
			zs = append(zs, redis.Z{Score: s.spec.unit.Score(fixedNow.Add(-a)), Member: m})
			f.fresh[s.spec.key] = append(f.fresh[s.spec.key], m)
		}
		for m, a := range s.spec.stale {
			zs = append(zs, redis.Z{Score: s.spec.unit.Score(fixedNow.Add(-a)), Member: m})
		}
		sort.Strings(f.fresh[s.spec.key])
		f.stale[s.spec.key] = int64(len(s.spec.stale))
		must(t, rdb.ZAdd(ctx, s.spec.key, zs...).Err())
		if s.spec.ttl > 0 {
			must(t, rdb.PExpire(ctx, s.spec.key, s.spec.ttl).Err())
		}
		w := s.want
		w.Key, w.Type, w.TTL, w.Unit = s.spec.key, "zset", s.spec.ttl, s.spec.unit
		if s.spec.ttl == 0 {
			w.TTL = -1
		}
		f.want[s.spec.key] = w
	}

	// Scores that are ranks, not times: no unit, no ages, never purged.
	must(t, rdb.ZAdd(ctx, k("ranks"), redis.Z{Score: 1, Member: "m1"}, redis.Z{Score: 2, Member: "m2"}, redis.Z{Score: 3, Member: "m3"}).Err())
	f.want[k("ranks")] = KeyInfo{Key: k("ranks"), Type: "zset", Kind: kind.Unknown, Size: 3, TTL: -1, Flags: []Flag{FlagNoTTL}}
	f.fresh[k("ranks")] = []string{"m1", "m2", "m3"}

	must(t, rdb.Set(ctx, k("ctr:ttl"), 17, time.Hour).Err())
	f.want[k("ctr:ttl")] = KeyInfo{Key: k("ctr:ttl"), Type: "string", Kind: kind.Counter, Size: 17, TTL: time.Hour, Flags: []Flag{FlagOverLimit}}
	must(t, rdb.Set(ctx, k("ctr:nottl"), 3, 0).Err())
	f.want[k("ctr:nottl")] = KeyInfo{Key: k("ctr:nottl"), Type: "string", Kind: kind.Counter, Size: 3, TTL: -1, Flags: []Flag{FlagNoTTL}}
	must(t, rdb.HSet(ctx, k("bucket"), "tokens", "3.75", "ts", scores.UnitMillis.Score(fixedNow.Add(-2*time.Second))).Err())
	must(t, rdb.PExpire(ctx, k("bucket"), time.Hour).Err())
	f.want[k("bucket")] = KeyInfo{Key: k("bucket"), Type: "hash", Kind: kind.Bucket, Size: 3, TTL: time.Hour, Unit: scores.UnitMillis,
		OldestAge: age(2 * time.Second), NewestAge: age(2 * time.Second), Flags: []Flag{}}
	must(t, rdb.RPush(ctx, k("list"), "a", "b", "c").Err())
	f.want[k("list")] = KeyInfo{Key: k("list"), Type: "list", Kind: kind.Unknown, Size: 3, TTL: -1, Flags: []Flag{FlagNoTTL}}
	must(t, rdb.Set(ctx, k("text"), "hello", 0).Err())
	f.want[k("text")] = KeyInfo{Key: k("text"), Type: "string", Kind: kind.Unknown, Size: 5, TTL: -1, Flags: []Flag{FlagNoTTL}}
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fixedClock() Clock { return LocalClock(func() time.Time { return fixedNow }) }

// nodeOf is the address of the master holding key.
func nodeOf(t *testing.T, rdb redis.UniversalClient, key string) string {
	t.Helper()
	n, err := masterFor(context.Background(), rdb, key)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestInspectIsExactOnASingleNodeAndACluster(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			f := seed(t, tg.rdb, "inspect-"+tg.name)
			sel, err := Select(ctx, tg.rdb, []string{f.prefix + ":*"}, SelectOptions{Count: 7})
			must(t, err)
			if sel.Scanned != len(f.want) || sel.Truncated {
				t.Fatalf("scanned %d (truncated %v), want %d", sel.Scanned, sel.Truncated, len(f.want))
			}
			in, err := Inspect(ctx, tg.rdb, sel, InspectOptions{Stale: staleAfter, Limit: 4, HasLimit: true, Clock: fixedClock()})
			must(t, err)
			if !in.Now.Equal(fixedNow) {
				t.Errorf("reference time %v, want the injected %v", in.Now, fixedNow)
			}
			if len(in.Keys) != len(f.want) {
				t.Fatalf("%d keys, want %d", len(in.Keys), len(f.want))
			}
			nodes := map[string]bool{}
			for i, got := range in.Keys {
				if i > 0 && in.Keys[i-1].Key >= got.Key {
					t.Errorf("not sorted by key: %s before %s", in.Keys[i-1].Key, got.Key)
				}
				want, ok := f.want[got.Key]
				if !ok {
					t.Errorf("unexpected key %s", got.Key)
					continue
				}
				want.Node = nodeOf(t, tg.rdb, got.Key)
				nodes[got.Node] = true
				if got.Memory == nil || *got.Memory <= 0 {
					t.Errorf("%s: memory %v, want a byte count", got.Key, got.Memory)
				}
				// The TTL counts down in real time: the one set, less a little, or -1 for none.
				if want.TTL > 0 && (got.TTL > want.TTL || got.TTL < want.TTL-time.Minute) || want.TTL < 0 && got.TTL != -1 {
					t.Errorf("%s: TTL %v, want about %v", got.Key, got.TTL, want.TTL)
				}
				got.Memory, got.TTL = nil, want.TTL
				if !reflect.DeepEqual(show(got), show(want)) {
					t.Errorf("%s:\n got %s\nwant %s", got.Key, show(got), show(want))
				}
			}
			if tg.name == "cluster" && len(nodes) != 3 {
				t.Errorf("keys found on %d masters, want all 3 (SCAN must visit every master)", len(nodes))
			}
			tot := in.Totals()
			if tot.Keys != 13 || tot.Members != 2528 || tot.Stale != 2509 || tot.MemoryUnknown != 0 || tot.Memory <= 0 {
				t.Errorf("totals %+v, want 13 keys, 2528 members, 2509 stale, memory known", tot)
			}
		})
	}
}

// show prints a KeyInfo with its pointers dereferenced, for comparison and messages.
func show(k KeyInfo) string {
	d := func(p *time.Duration) string {
		if p == nil {
			return "nil"
		}
		return p.String()
	}
	return fmt.Sprintf("{%s node=%s type=%s kind=%s size=%d ttl=%v unit=%q oldest=%s newest=%s stale=%d flags=%v}",
		k.Key, k.Node, k.Type, k.Kind, k.Size, k.TTL, k.Unit, d(k.OldestAge), d(k.NewestAge), k.Stale, k.Flags)
}

func TestInspectLiteralKeysMissingKeysAndVanishedKeys(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			f := seed(t, tg.rdb, "literal-"+tg.name)
			sel, err := Select(ctx, tg.rdb, []string{f.prefix + ":ctr:ttl", f.prefix + ":nope", f.prefix + ":conc:ms"}, SelectOptions{})
			must(t, err)
			if sel.Masters != 0 {
				t.Errorf("literal keys were scanned (%d masters)", sel.Masters)
			}
			// A key SCAN saw and that is gone by the time it is read.
			sel.Targets = append(sel.Targets, Target{Key: f.prefix + ":vanished", Node: nodeOf(t, tg.rdb, f.prefix+":vanished")})
			in, err := Inspect(ctx, tg.rdb, sel, InspectOptions{Clock: fixedClock()})
			must(t, err)
			if len(in.Keys) != 2 || in.Keys[0].Key != f.prefix+":conc:ms" || in.Keys[1].Key != f.prefix+":ctr:ttl" {
				t.Errorf("keys %v, want conc:ms and ctr:ttl", in.Keys)
			}
			if in.Vanished != 1 || !reflect.DeepEqual(in.Missing, []string{f.prefix + ":nope"}) {
				t.Errorf("vanished %d missing %v, want 1 and [%s:nope]", in.Vanished, in.Missing, f.prefix)
			}
			// Without --stale nothing is stale, and without --limit nothing is over it.
			for _, k := range in.Keys {
				if k.Stale != 0 || len(k.Flags) != 0 {
					t.Errorf("%s: stale %d flags %v without --stale or --limit", k.Key, k.Stale, k.Flags)
				}
			}
		})
	}
}

func TestSelectMaxKeysTypeFilterAndEmptyMatch(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			f := seed(t, tg.rdb, "select-"+tg.name)
			sel, err := Select(ctx, tg.rdb, []string{f.prefix + ":*"}, SelectOptions{MaxKeys: 5, Count: 3})
			must(t, err)
			if len(sel.Targets) != 5 || !sel.Truncated {
				t.Errorf("%d keys truncated=%v, want 5 and truncated", len(sel.Targets), sel.Truncated)
			}
			sel, err = Select(ctx, tg.rdb, []string{f.prefix + ":*"}, SelectOptions{MaxKeys: 13})
			must(t, err)
			if len(sel.Targets) != 13 || sel.Truncated {
				t.Errorf("%d keys truncated=%v, want 13, not truncated (exactly the bound)", len(sel.Targets), sel.Truncated)
			}
			sel, err = Select(ctx, tg.rdb, []string{f.prefix + ":*"}, SelectOptions{Type: "zset"})
			must(t, err)
			if len(sel.Targets) != 8 {
				t.Errorf("SCAN TYPE zset found %d keys, want 8", len(sel.Targets))
			}
			// Overlapping patterns do not list a key twice.
			sel, err = Select(ctx, tg.rdb, []string{f.prefix + ":ctr:*", f.prefix + ":ctr:t?l", f.prefix + ":ctr:ttl"}, SelectOptions{})
			must(t, err)
			if len(sel.Targets) != 2 {
				t.Errorf("overlapping patterns gave %v", sel.Targets)
			}
			sel, err = Select(ctx, tg.rdb, []string{f.prefix + ":nothing:*"}, SelectOptions{})
			must(t, err)
			if len(sel.Targets) != 0 || sel.Scanned != 0 {
				t.Errorf("empty match gave %v", sel.Targets)
			}
			if want := map[string]int{"single": 1, "cluster": 3}[tg.name]; sel.Masters != want {
				t.Errorf("scanned %d masters, want %d", sel.Masters, want)
			}
		})
	}
}

func TestPurgeRemovesExactlyTheStaleMembers(t *testing.T) {
	for _, tg := range targets(t) {
		for _, batch := range []int64{2, DefaultBatch} {
			t.Run(fmt.Sprintf("%s/batch=%d", tg.name, batch), func(t *testing.T) {
				ctx := context.Background()
				f := seed(t, tg.rdb, fmt.Sprintf("purge-%s-%d", tg.name, batch))
				sel, err := Select(ctx, tg.rdb, []string{f.prefix + ":*"}, SelectOptions{})
				must(t, err)

				dry, err := Purge(ctx, tg.rdb, sel, PurgeOptions{OlderThan: staleAfter, Batch: batch, DryRun: true, Clock: fixedClock()})
				must(t, err)
				res, err := Purge(ctx, tg.rdb, sel, PurgeOptions{OlderThan: staleAfter, Batch: batch, Clock: fixedClock()})
				must(t, err)
				if res.TotalRemoved != 2509 || dry.TotalRemoved != 2509 {
					t.Errorf("removed %d (dry run %d), want 2509", res.TotalRemoved, dry.TotalRemoved)
				}
				if !reflect.DeepEqual(dry.Keys, res.Keys) {
					t.Errorf("the dry run's report differs from the purge's:\n dry %+v\nreal %+v", dry.Keys, res.Keys)
				}
				for _, pk := range res.Keys {
					want := f.want[pk.Key]
					switch {
					case want.Key == f.prefix+":ranks":
						if pk.Skipped != SkipNotTimes || pk.Removed != 0 {
							t.Errorf("%s: %+v, want skipped %q", pk.Key, pk, SkipNotTimes)
						}
					case want.Type != "zset":
						if pk.Skipped != SkipNotSortedSet || pk.Removed != 0 || pk.Remaining != 0 {
							t.Errorf("%s: %+v, want skipped %q", pk.Key, pk, SkipNotSortedSet)
						}
					default:
						if pk.Skipped != "" || pk.Removed != f.stale[pk.Key] || pk.Remaining != int64(len(f.fresh[pk.Key])) || pk.Unit != want.Unit {
							t.Errorf("%s: %+v, want removed %d remaining %d unit %s", pk.Key, pk, f.stale[pk.Key], len(f.fresh[pk.Key]), want.Unit)
						}
					}
					if pk.Node != nodeOf(t, tg.rdb, pk.Key) {
						t.Errorf("%s: node %s", pk.Key, pk.Node)
					}
				}
				// What is left is exactly the fresh members, and the other keys are untouched.
				for key, fresh := range f.fresh {
					left, err := tg.rdb.ZRange(ctx, key, 0, -1).Result()
					must(t, err)
					sort.Strings(left)
					if !reflect.DeepEqual(left, fresh) {
						t.Errorf("%s holds %v after purge, want exactly %v", key, left, fresh)
					}
				}
				if v, _ := tg.rdb.Get(ctx, f.prefix+":ctr:ttl").Result(); v != "17" {
					t.Errorf("counter changed to %q", v)
				}
			})
		}
	}
}

// countingHook counts the purge_stale calls a client sends, and can cancel a context after
// the first one, as Ctrl-C would.
type countingHook struct {
	mu       sync.Mutex
	calls    int
	removed  []int64
	cancelAt int
	cancel   context.CancelFunc
}

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		name := cmd.Name()
		if (name == "evalsha" || name == "eval") && err == nil {
			h.mu.Lock()
			h.calls++
			if vals, e := cmd.(*redis.Cmd).Int64Slice(); e == nil {
				h.removed = append(h.removed, vals[0])
			}
			if h.calls == h.cancelAt && h.cancel != nil {
				h.cancel()
			}
			h.mu.Unlock()
		}
		return err
	}
}

func TestPurgeRunsInBoundedBatches(t *testing.T) {
	s := singleServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	defer rdb.Close()
	hook := &countingHook{}
	rdb.AddHook(hook)
	ctx := context.Background()
	f := seed(t, rdb, "batches")
	sel, err := Select(ctx, rdb, []string{f.prefix + ":big:log"}, SelectOptions{})
	must(t, err)
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: staleAfter, Batch: 1000, Clock: fixedClock()})
	must(t, err)
	if res.TotalRemoved != 2500 || !reflect.DeepEqual(hook.removed, []int64{1000, 1000, 500}) {
		t.Errorf("removed %d in calls %v, want 2500 in 1000+1000+500", res.TotalRemoved, hook.removed)
	}
}

// The largest batch removes exactly MaxBatch members per call (member names never pass
// through Lua, whose unpack would overflow near 8000 values).
func TestPurgeLargestBatch(t *testing.T) {
	s := singleServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	defer rdb.Close()
	hook := &countingHook{}
	rdb.AddHook(hook)
	ctx := context.Background()
	key := "largest:batch"
	var zs []redis.Z
	for i := 0; i < MaxBatch+2000; i++ {
		zs = append(zs, redis.Z{Score: scores.UnitMillis.Score(fixedNow.Add(-time.Hour - time.Duration(i)*time.Millisecond)), Member: "old-" + strconv.Itoa(i)})
	}
	zs = append(zs, redis.Z{Score: scores.UnitMillis.Score(fixedNow.Add(-time.Hour)), Member: "at-the-cutoff"})
	zs = append(zs, redis.Z{Score: scores.UnitMillis.Score(fixedNow.Add(-time.Hour + time.Millisecond)), Member: "just-fresh"})
	must(t, rdb.ZAdd(ctx, key, zs...).Err())
	sel, err := Select(ctx, rdb, []string{key}, SelectOptions{})
	must(t, err)
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: time.Hour, Batch: MaxBatch, Clock: fixedClock()})
	must(t, err)
	// A member exactly D old is "at or before now - D": it goes; one a millisecond younger stays.
	if res.TotalRemoved != MaxBatch+2001 || !reflect.DeepEqual(hook.removed, []int64{MaxBatch, 2001}) {
		t.Errorf("removed %d in calls %v, want %d in %d+2001", res.TotalRemoved, hook.removed, MaxBatch+2001, MaxBatch)
	}
	if left, _ := rdb.ZRange(ctx, key, 0, -1).Result(); !reflect.DeepEqual(left, []string{"just-fresh"}) {
		t.Errorf("left %v, want [just-fresh]", left)
	}
}

func TestPurgeStopsBetweenBatchesWhenCancelled(t *testing.T) {
	s := singleServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	defer rdb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hook := &countingHook{cancelAt: 1, cancel: cancel}
	rdb.AddHook(hook)
	f := seed(t, rdb, "cancel")
	sel, err := Select(context.Background(), rdb, []string{f.prefix + ":*"}, SelectOptions{})
	must(t, err)
	// big:log is the first zset in key order; the context is cancelled as its first batch returns.
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: staleAfter, Batch: 1000, Clock: fixedClock()})
	must(t, err)
	if !res.Interrupted || res.TotalRemoved != 1000 || hook.calls != 1 {
		t.Fatalf("interrupted=%v removed=%d calls=%d, want interrupted after one batch of 1000", res.Interrupted, res.TotalRemoved, hook.calls)
	}
	last := res.Keys[len(res.Keys)-1]
	if last.Key != f.prefix+":big:log" || last.Removed != 1000 || last.Remaining != 1503 {
		t.Errorf("last key %+v, want big:log removed 1000 remaining 1503", last)
	}
	if n, _ := rdb.ZCard(context.Background(), f.prefix+":big:log").Result(); n != 1503 {
		t.Errorf("big:log holds %d, want 1503: the report must match what was done", n)
	}
}

func TestPurgeVanishedAndMissingKeys(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			p := "vanish-" + tg.name
			sel := Selection{Targets: []Target{
				{Key: p + ":gone", Node: nodeOf(t, tg.rdb, p+":gone")},
				{Key: p + ":never", Node: nodeOf(t, tg.rdb, p+":never"), Named: true},
			}}
			for _, dry := range []bool{false, true} {
				res, err := Purge(ctx, tg.rdb, sel, PurgeOptions{OlderThan: time.Minute, Batch: 10, DryRun: dry, Clock: fixedClock()})
				must(t, err)
				if res.Keys[0].Skipped != SkipVanished || res.Keys[1].Skipped != SkipNoSuchKey {
					t.Errorf("dry=%v: %+v, want %q then %q", dry, res.Keys, SkipVanished, SkipNoSuchKey)
				}
			}
		})
	}
}

func TestPurgeExplicitUnitAndServerClock(t *testing.T) {
	s := singleServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2})
	defer rdb.Close()
	ctx := context.Background()
	serverNow, err := rdb.Time(ctx).Result()
	must(t, err)
	// Members relative to the server's clock, an hour apart from the boundary either way.
	key := "clock:ms"
	must(t, rdb.ZAdd(ctx, key,
		redis.Z{Score: scores.UnitMillis.Score(serverNow.Add(-2 * time.Hour)), Member: "old-1"},
		redis.Z{Score: scores.UnitMillis.Score(serverNow.Add(-time.Minute)), Member: "new-1"}).Err())
	sel, err := Select(ctx, rdb, []string{key}, SelectOptions{})
	must(t, err)
	res, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: time.Hour, Batch: 10, DryRun: true, Clock: ServerClock(rdb)})
	must(t, err)
	if res.Keys[0].Removed != 1 || res.Keys[0].Unit != scores.UnitMillis || res.Now.Sub(serverNow) > time.Minute {
		t.Errorf("server clock: %+v at %v, want 1 of 2 older than 1h at about %v", res.Keys[0], res.Now, serverNow)
	}
	// Read as seconds, millisecond scores lie far in the future: nothing is older than an hour.
	res, err = Purge(ctx, rdb, sel, PurgeOptions{OlderThan: time.Hour, Batch: 10, Unit: scores.UnitSeconds, Clock: ServerClock(rdb)})
	must(t, err)
	if res.Keys[0].Removed != 0 || res.Keys[0].Remaining != 2 {
		t.Errorf("explicit unit s: %+v, want nothing removed", res.Keys[0])
	}
	// Bounds are checked here too, whatever the caller validated.
	if _, err := Purge(ctx, rdb, sel, PurgeOptions{OlderThan: time.Hour, Batch: MaxBatch + 1, Clock: ServerClock(rdb)}); err == nil || !strings.Contains(err.Error(), "batch") {
		t.Errorf("batch above the maximum accepted: %v", err)
	}
}

func TestMembersListsTheOldestFirst(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			f := seed(t, tg.rdb, "members-"+tg.name)
			list, err := Members(ctx, tg.rdb, f.prefix+":conc:ms", MembersOptions{Top: 3, Stale: staleAfter, Clock: fixedClock()})
			must(t, err)
			var got []string
			for _, m := range list.Members {
				got = append(got, fmt.Sprintf("%s %v %v", m.Member, *m.Age, m.Stale))
			}
			want := []string{"req-5 30m0s true", "req-4 20m0s true", "req-3 3s false"}
			if !reflect.DeepEqual(got, want) || list.Size != 5 || list.Unit != scores.UnitMillis || list.Node != nodeOf(t, tg.rdb, f.prefix+":conc:ms") {
				t.Errorf("members %v size %d unit %s, want %v of 5 in ms", got, list.Size, list.Unit, want)
			}
			if !list.Members[0].Time.Equal(fixedNow.Add(-30 * time.Minute)) {
				t.Errorf("time %v", list.Members[0].Time)
			}
			all, err := Members(ctx, tg.rdb, f.prefix+":ranks", MembersOptions{Clock: fixedClock()})
			must(t, err)
			if len(all.Members) != 3 || all.Unit != "" || all.Members[0].Age != nil || all.Members[0].Score != 1 {
				t.Errorf("ranks: %+v, want 3 members without times", all)
			}
			if _, err := Members(ctx, tg.rdb, f.prefix+":ctr:ttl", MembersOptions{Clock: fixedClock()}); err == nil || !strings.Contains(err.Error(), "is a string") {
				t.Errorf("members of a counter: %v", err)
			}
			if _, err := Members(ctx, tg.rdb, f.prefix+":nope", MembersOptions{Clock: fixedClock()}); err == nil || !strings.Contains(err.Error(), "no such key") {
				t.Errorf("members of a missing key: %v", err)
			}
		})
	}
}

// Every limiter limitctl ships leaves keys that inspect recognises, with a TTL, as the kind
// its description says inspect names them (limiter.Description.Inspect: the one place the two
// vocabularies meet).
func TestInspectRecognisesTheKeysOfTheShippedLimiters(t *testing.T) {
	ctx := context.Background()
	rdb := singleServer(t).Client(t)
	now := fixedNow
	cfg := limiter.Config{Limit: 5, Window: time.Minute, StaleAfter: time.Minute, Rate: 1, Burst: 5}
	for _, k := range limiter.Kinds() {
		d := k.Describe()
		if !slices.Contains(inspectKinds, kind.Kind(d.Inspect)) {
			t.Errorf("%s: inspect names its keys %q, which is no kind inspect reports", k, d.Inspect)
		}
		lim, err := limiter.New(k, limiter.Lua, rdb, cfg)
		must(t, err)
		key := "shipped:" + strings.ReplaceAll(string(k), "-", "_")
		for i := 0; i < 3; i++ {
			_, err := lim.Acquire(ctx, key, now.Add(-time.Duration(i)*time.Second))
			must(t, err)
		}
		name := d.DecisionKey(key, now, cfg.Window)
		sel, err := Select(ctx, rdb, []string{name}, SelectOptions{})
		must(t, err)
		in, err := Inspect(ctx, rdb, sel, InspectOptions{Clock: fixedClock()})
		must(t, err)
		if len(in.Keys) != 1 || in.Keys[0].Kind != kind.Kind(d.Inspect) || in.Keys[0].TTL <= 0 {
			t.Errorf("%s key %s: %+v, want kind %s with a TTL", k, name, in.Keys, d.Inspect)
		}
	}
}

// inspectKinds are the kinds inspect reports: their names are a contract of its JSON.
var inspectKinds = []kind.Kind{kind.Concurrency, kind.WindowLog, kind.Counter, kind.Bucket, kind.GCRA, kind.SlidingCounter, kind.Unknown}
