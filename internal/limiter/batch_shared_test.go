package limiter_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	cluster, b, keys := sharedFixedWindow(t, 0)
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
	cluster, b, keys := sharedFixedWindow(t, 200*time.Millisecond)
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

// sharedFixedWindow is a 3-master cluster and a batch of the shipped fixed window through
// rueidis (timeout 0: the configuration's own), with one round answered on six keys.
func sharedFixedWindow(t *testing.T, timeout time.Duration) (*redistest.Cluster, *limiter.Batch, []string) {
	t.Helper()
	cluster := redistest.StartCluster(t, 3, 0)
	cc := cluster.Client(t)
	cfg := bigConfig(limiter.FixedWindow, limiter.Lua)
	shared := sharedOn(t, cc)
	cfg.Shared, cfg.SharedTimeout = shared.Shared, cmp.Or(timeout, shared.SharedTimeout)
	lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	t.Cleanup(b.Close)
	keys := clusterKeys(t, 6)
	roundOf(t, b, keys, 6)
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
