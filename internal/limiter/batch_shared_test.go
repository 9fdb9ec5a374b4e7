package limiter_test

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/redistest"
)

// sharedOn is a rueidis client of the cluster (redisconn.Shared), closed at the end of the test.
func sharedOn(t *testing.T, cc *redis.ClusterClient) limiter.Config {
	t.Helper()
	shared, timeout, err := redisconn.Shared(cc)
	if err != nil || shared == nil {
		t.Fatalf("rueidis client of the cluster: %v", err)
	}
	t.Cleanup(shared.Close)
	return limiter.Config{Shared: shared, SharedTimeout: timeout}
}

// clusterKeys are n keys of the test, each its own hash tag: on a cluster they fall on every master.
func clusterKeys(t *testing.T, n int) []string {
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("%s:{%d}", strings.Trim(keyFor(t), "{}"), i))
	}
	return keys
}

// NOSCRIPT recovery through rueidis: after SCRIPT FLUSH and FUNCTION FLUSH on every master,
// every call of the next batch is answered, the script loaded again where it is missing.
func TestASharedBatchSurvivesScriptAndFunctionFlush(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	cc := cluster.Client(t)
	shared := sharedOn(t, cc)
	ctx := context.Background()
	for _, c := range batchCases() {
		t.Run(fmt.Sprintf("%s/%s", c.k, c.s), func(t *testing.T) {
			cfg := bigConfig(c.k, c.s)
			cfg.Shared, cfg.SharedTimeout = shared.Shared, shared.SharedTimeout
			lim, err := limiter.New(c.k, c.s, cc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			b := limiter.NewBatch(lim)
			defer b.Close()
			keys := clusterKeys(t, 6)
			roundOf(t, b, keys, 6)
			err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
				if err := m.ScriptFlush(ctx).Err(); err != nil {
					return err
				}
				return m.FunctionFlush(ctx).Err()
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := roundOf(t, b, keys, 18); got != 18 {
				t.Fatalf("after the flush %d of 18 calls were admitted at a limit they cannot reach", got)
			}
		})
	}
}

// A connection the server drops under a round through rueidis fails the round's calls with an
// error rediserr classifies as a lost connection, and the next round is answered.
func TestASharedBatchClassifiesADroppedConnection(t *testing.T) {
	for _, path := range clusterPaths {
		t.Run(path, func(t *testing.T) { classifiesADroppedConnection(t, path) })
	}
}

// clusterPaths are a cluster's two fast paths: every call through rueidis, and each call on a
// connection of the batch's own to its master (Config.Nodes).
var clusterPaths = []string{"rueidis", "nodes"}

func classifiesADroppedConnection(t *testing.T, path string) {
	cluster, b, keys := sharedFixedWindow(t, 0, path)
	ctx := context.Background()
	for _, m := range cluster.Masters {
		if err := m.Client(t).Do(ctx, "client", "kill", "skipme", "yes", "type", "normal").Err(); err != nil {
			t.Fatal(err)
		}
	}
	calls := make([]limiter.Call, 6)
	for i := range calls {
		calls[i] = limiter.Call{Key: keys[i], Now: time.Now()}
	}
	b.Do(ctx, calls)
	dropped := 0
	for _, c := range calls {
		if c.Err != nil {
			dropped++
			if rediserr.Classify(c.Err) != rediserr.Connection {
				t.Errorf("%s: %v classified %q, want %q", c.Key, c.Err, rediserr.Classify(c.Err), rediserr.Connection)
			}
		}
	}
	if dropped == 0 {
		t.Errorf("no call of the round after CLIENT KILL failed: the drop was not seen")
	}
	roundOf(t, b, keys, 6)
}

// A round through rueidis that the servers do not answer within the timeout fails its calls as
// timeouts, as rediserr classifies them, instead of holding the round.
func TestASharedBatchTimesOut(t *testing.T) {
	for _, path := range clusterPaths {
		t.Run(path, func(t *testing.T) { sharedBatchTimesOut(t, path) })
	}
}

func sharedBatchTimesOut(t *testing.T, path string) {
	cluster, b, keys := sharedFixedWindow(t, 200*time.Millisecond, path)
	ctx := context.Background()
	for _, m := range cluster.Masters {
		if err := m.Client(t).Do(ctx, "client", "pause", 1500, "all").Err(); err != nil {
			t.Fatal(err)
		}
	}
	calls := make([]limiter.Call, 6)
	for i := range calls {
		calls[i] = limiter.Call{Key: keys[i], Now: time.Now()}
	}
	b.Do(ctx, calls)
	for _, c := range calls {
		if rediserr.Classify(c.Err) != rediserr.Timeout {
			t.Errorf("%s while the servers are paused: %v, want a timeout", c.Key, c.Err)
		}
	}
}

// sharedFixedWindow is a 3-master cluster and a batch of the shipped fixed window on one of
// clusterPaths (timeout 0: the configuration's own), with one round answered on six keys.
func sharedFixedWindow(t *testing.T, timeout time.Duration, path string) (*redistest.Cluster, *limiter.Batch, []string) {
	t.Helper()
	cluster := redistest.StartCluster(t, 3, 0)
	cc := cluster.Client(t)
	cfg := bigConfig(limiter.FixedWindow, limiter.Lua)
	shared := sharedOn(t, cc)
	var seen *sharedCount
	if path == "nodes" {
		var nodes limiter.Config
		nodes, seen, _ = nodesOn(t, cc)
		shared.Shared, shared.Nodes = nodes.Shared, nodes.Nodes
		if timeout > 0 {
			shared.Nodes.ReadTimeout = timeout // a master's own connection's bound, as the cluster client's
		}
	}
	cfg.Shared, cfg.SharedTimeout, cfg.Nodes = shared.Shared, cmp.Or(timeout, shared.SharedTimeout), shared.Nodes
	lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	t.Cleanup(b.Close)
	keys := clusterKeys(t, 6)
	roundOf(t, b, keys, 6)
	if seen != nil && seen.taken() != 0 {
		t.Fatal("a round went through rueidis; want it on the masters' own connections")
	}
	return cluster, b, keys
}

// A command slot's array reply is written over in place round after round (reusedArray): each
// round's decision reads its own reply, whether the array kept its length, lost an element to
// nil, or changed length.
func TestASharedBatchReadsEachRoundsOwnArray(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	cc := cluster.Client(t)
	// The n-th call replies {1, n, 7, 7}, {1, n, false, 7}, {1, n}, {1, n, 7, 7}, ...: allowed
	// only when its third element is 7.
	src := `local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], 60000)
local shape = n % 4
if shape == 2 then return {1, n, false, 7} end
if shape == 3 then return {1, n} end
return {1, n, 7, 7}`
	cfg := contractConfig(t, src, contract.Spec{Keys: "{key}", Allowed: "reply[1] == 1 and reply[3] == 7"}, limiter.FixedWindow)
	shared := sharedOn(t, cc)
	cfg.Shared, cfg.SharedTimeout = shared.Shared, shared.SharedTimeout
	lim, err := limiter.New(limiter.FixedWindow, limiter.Custom, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	defer b.Close()
	key := clusterKeys(t, 1)[0]
	var got []bool
	for range 8 {
		calls := []limiter.Call{{Key: key, Now: time.Now()}}
		b.Do(context.Background(), calls)
		if calls[0].Err != nil {
			t.Fatal(calls[0].Err)
		}
		got = append(got, calls[0].Decision.Allowed)
	}
	if want := []bool{true, false, false, true, true, false, false, true}; !slices.Equal(got, want) {
		t.Fatalf("allowed round after round %v, want %v", got, want)
	}
}

// Groups parts the keys by the master their calls go to, for every script strategy and kind
// and for a contract whose KEYS are templates of the key: each key in one group, the keys of
// a group on one master, no master in two groups. Anything but a cluster is one group of
// every key in order: go-redis's pipelines, a connection of the batch's own, and a rueidis
// client of a single node, which has no cluster to ask about.
func TestGroupsPartTheKeysByMaster(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	cc := cluster.Client(t)
	shared := sharedOn(t, cc)
	ctx := context.Background()
	keys := clusterKeys(t, 24)
	now := time.Now()
	for _, c := range batchCases() {
		t.Run(fmt.Sprintf("%s/%s", c.k, c.s), func(t *testing.T) {
			cfg := bigConfig(c.k, c.s)
			cfg.Shared, cfg.SharedTimeout = shared.Shared, shared.SharedTimeout
			if c.s == limiter.Custom {
				// KEYS built from the key, as libraries name theirs: the key's hash tag kept.
				spec := contract.Spec{Keys: "{key}:tokens {key}:ts"}
				var err error
				if cfg.Contract, err = contract.Compile(spec, limiter.DefaultContract(c.k)); err != nil {
					t.Fatal(err)
				}
			}
			lim, err := limiter.New(c.k, c.s, cc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			groups := limiter.NewBatch(lim).Groups(ctx, keys, now)
			masterOf := map[string]int{} // a master's group
			seen := make([]bool, len(keys))
			for g, group := range groups {
				for _, i := range group {
					if seen[i] {
						t.Fatalf("key %d is in two groups: %v", i, groups)
					}
					seen[i] = true
					m, err := cc.MasterForKey(ctx, keys[i])
					if err != nil {
						t.Fatal(err)
					}
					addr := m.Options().Addr
					if was, ok := masterOf[addr]; ok && was != g {
						t.Fatalf("master %s serves keys of groups %d and %d: %v", addr, was, g, groups)
					}
					masterOf[addr] = g
				}
			}
			if slices.Contains(seen, false) || len(groups) != len(masterOf) || len(groups) < 2 {
				t.Fatalf("groups %v of %d keys on %d masters; want every key once, a group per master, and several", groups, len(keys), len(masterOf))
			}
		})
	}
	single := redistest.Start(t)
	rdb := single.Client(t)
	lone, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{single.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lone.Close()
	for name, cfg := range map[string]limiter.Config{
		"pipelines": {}, "direct": {Direct: rdb.Options()}, "rueidis": {Shared: lone, SharedTimeout: time.Second},
	} {
		cfg.Limit, cfg.Window = 10, time.Second
		lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, rdb, cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := [][]int{{0, 1, 2, 3, 4, 5}}
		if got := limiter.NewBatch(lim).Groups(ctx, keys[:6], now); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: groups %v; want %v", name, got, want)
		}
	}
}
