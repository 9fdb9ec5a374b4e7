package limiter_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// nodesOn is a cluster's batches on connections of their own to each master (Config.Nodes),
// rueidis (counted) taking what those cannot, and the dials of those connections by address.
func nodesOn(t *testing.T, cc *redis.ClusterClient) (limiter.Config, *sharedCount, *dials) {
	t.Helper()
	cfg := sharedOn(t, cc)
	seen := &sharedCount{SharedClient: cfg.Shared}
	cfg.Shared = seen
	opts, ok := redisconn.NodeOptions(cc)
	if !ok {
		t.Fatal("no node options for a cluster client")
	}
	d := &dials{by: map[string]int{}}
	opts.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.mu.Lock()
		d.by[addr]++
		d.mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	cfg.Nodes = opts
	return cfg, seen, d
}

// sharedCount is a cluster's rueidis client that counts the script calls sent through it.
type sharedCount struct {
	limiter.SharedClient
	mu      sync.Mutex
	scripts int
}

func (c *sharedCount) Mode() rueidis.ClientMode { return rueidis.ClientModeCluster }

func (c *sharedCount) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	c.mu.Lock()
	for i := range multi {
		if name := multi[i].Commands()[0]; name == "EVALSHA" || name == "EVAL" || name == "FCALL" {
			c.scripts++
		}
	}
	c.mu.Unlock()
	return c.SharedClient.DoMulti(ctx, multi...)
}

func (c *sharedCount) taken() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.scripts
	c.scripts = 0
	return n
}

type dials struct {
	mu sync.Mutex
	by map[string]int
}

// With Config.Nodes every call of every script strategy and kind goes to its key's master on
// the batch's own connection, none through rueidis: rounds on keys of every master are
// answered, and each master is dialled once however many rounds there are.
func TestANodesBatchWritesEachCallToItsMaster(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	cc := cluster.Client(t)
	for _, c := range batchCases() {
		t.Run(fmt.Sprintf("%s/%s", c.k, c.s), func(t *testing.T) {
			cfg, seen, d := nodesOn(t, cc)
			big := bigConfig(c.k, c.s)
			cfg.Limit, cfg.Window, cfg.StaleAfter, cfg.Rate, cfg.Burst, cfg.CustomSource =
				big.Limit, big.Window, big.StaleAfter, big.Rate, big.Burst, big.CustomSource
			lim, err := limiter.New(c.k, c.s, cc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			b := limiter.NewBatch(lim)
			defer b.Close()
			keys := clusterKeys(t, 12)
			for round := range 3 {
				if got := roundOf(t, b, keys, 24); got != 24 {
					t.Fatalf("round %d: %d of 24 admitted at a limit they cannot reach", round+1, got)
				}
			}
			if n := seen.taken(); n != 0 {
				t.Errorf("%d script calls went through rueidis; want every one on the masters' own connections", n)
			}
			if len(d.by) != len(cluster.Masters) {
				t.Errorf("dialled %v; want each of the %d masters", d.by, len(cluster.Masters))
			}
			for addr, n := range d.by {
				if n != 1 {
					t.Errorf("%s dialled %d times over 3 rounds; want once", addr, n)
				}
			}
		})
	}
}

// countScript counts its calls in KEYS[1] and replies {1, n}: a call that ran twice shows as a
// count above the calls made.
const countScript = `local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], 60000)
return {1, n}`

// countingBatch is a batch of countScript through Config.Nodes on a cluster of its own.
func countingBatch(t *testing.T) (*redistest.Cluster, *redis.ClusterClient, *limiter.Batch, *sharedCount) {
	t.Helper()
	cluster := redistest.StartCluster(t, 3, 0)
	cc := cluster.Client(t)
	cfg := contractConfig(t, countScript, contract.Spec{Keys: "{key}", Allowed: "reply[1] == 1"}, limiter.FixedWindow)
	nodes, seen, _ := nodesOn(t, cc)
	cfg.Shared, cfg.SharedTimeout, cfg.Nodes = nodes.Shared, nodes.SharedTimeout, nodes.Nodes
	lim, err := limiter.New(limiter.FixedWindow, limiter.Custom, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	t.Cleanup(b.Close)
	return cluster, cc, b, seen
}

// countRound sends n calls on each key as one batch, failing t on an error, then fails t
// unless each key counted total calls: each call ran once, none lost, none twice.
func countRound(t *testing.T, cc *redis.ClusterClient, b *limiter.Batch, keys []string, n int, total int64, when string) {
	t.Helper()
	calls := make([]limiter.Call, 0, n*len(keys))
	for range n {
		for _, k := range keys {
			calls = append(calls, limiter.Call{Key: k, Now: time.Now()})
		}
	}
	b.Do(context.Background(), calls)
	for _, c := range calls {
		if c.Err != nil {
			t.Fatalf("%s: %s: %v", when, c.Key, c.Err)
		}
	}
	for _, k := range keys {
		if got, err := cc.Get(context.Background(), k).Int64(); err != nil || got != total {
			t.Fatalf("%s: %s counted %d calls (%v); want %d, each run once", when, k, got, err, total)
		}
	}
}

// A slot that moved to another master after the batch read the map (MOVED) and a slot half
// moved (ASK for a key already on the new master) cost nothing but the detour: the redirected
// calls are sent again through rueidis, which follows the redirection, each runs exactly once,
// and once the map is read again the calls go to the new master on the batch's own connection.
func TestANodesBatchFollowsMovedAndAsk(t *testing.T) {
	cluster, cc, b, seen := countingBatch(t)
	ctx := context.Background()
	tag := strings.Trim(keyFor(t), "{}")
	moved := []string{"{" + tag + ".m}:a", "{" + tag + ".m}:b"}
	countRound(t, cc, b, moved, 2, 2, "before the move")
	if n := seen.taken(); n != 0 {
		t.Fatalf("%d calls went through rueidis before any slot moved", n)
	}
	from, to, err := cluster.MigrateSlot(ctx, moved[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("moved %s from %s to %s", moved[0], from, to)
	countRound(t, cc, b, moved, 2, 4, "after the move (MOVED)")
	if n := seen.taken(); n != 4 {
		t.Errorf("%d calls went through rueidis after the move; want the 4 the old master redirected", n)
	}
	time.Sleep(150 * time.Millisecond) // past the map's refresh interval
	countRound(t, cc, b, moved, 2, 6, "with the map read again")
	if n := seen.taken(); n != 0 {
		t.Errorf("%d calls went through rueidis once the map was read again; want none", n)
	}

	// Half a slot moved: the first key on its new master (ASK), the second still on the old.
	half := []string{"{" + tag + ".h}:a", "{" + tag + ".h}:b"}
	countRound(t, cc, b, half, 2, 2, "before the migration")
	src, dst, slot := slotOwners(t, cc, half[0])
	steps := []struct {
		node *redis.Client
		args []any
	}{
		{dst.client, []any{"cluster", "setslot", slot, "importing", src.id}},
		{src.client, []any{"cluster", "setslot", slot, "migrating", dst.id}},
		{src.client, []any{"migrate", dst.host, dst.port, half[0], 0, 5000}},
	}
	for _, s := range steps {
		if err := s.node.Do(ctx, s.args...).Err(); err != nil {
			t.Fatalf("%v: %v", s.args, err)
		}
	}
	countRound(t, cc, b, half, 2, 4, "half migrated (ASK)")
	if n := seen.taken(); n != 2 {
		t.Errorf("%d calls went through rueidis with the slot half migrated; want the 2 on the moved key", n)
	}
}

// slotNode is a master and how it is named in CLUSTER SETSLOT and MIGRATE.
type slotNode struct {
	client     *redis.Client
	id, host   string
	port       string
	ownsTheKey bool
}

// slotOwners is the master of key's slot, another master, and the slot.
func slotOwners(t *testing.T, cc *redis.ClusterClient, key string) (src, dst slotNode, slot int64) {
	t.Helper()
	ctx := context.Background()
	owner, err := cc.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	slot, err = cc.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var nodes []slotNode
	err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		id, err := m.ClusterMyID(ctx).Result()
		if err != nil {
			return err
		}
		host, port, _ := net.SplitHostPort(m.Options().Addr)
		n := slotNode{client: redis.NewClient(&redis.Options{Addr: m.Options().Addr}), id: id, host: host, port: port}
		n.ownsTheKey = m.Options().Addr == owner.Options().Addr
		t.Cleanup(func() { n.client.Close() })
		mu.Lock()
		nodes = append(nodes, n)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.ownsTheKey {
			src = n
		} else {
			dst = n
		}
	}
	return src, dst, slot
}

// A release whose master moved its slot away (MOVED) is sent again through rueidis and
// removes the member on the new master: nothing the run held is left behind.
func TestANodesBatchReleasesAcrossAMove(t *testing.T) {
	cluster := redistest.StartCluster(t, 3, 0)
	cc := cluster.Client(t)
	cfg, seen, _ := nodesOn(t, cc)
	big := bigConfig(limiter.Concurrency, limiter.Lua)
	cfg.Limit, cfg.Window, cfg.StaleAfter = big.Limit, big.Window, big.StaleAfter
	lim, err := limiter.New(limiter.Concurrency, limiter.Lua, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	defer b.Close()
	ctx := context.Background()
	key := keyFor(t)
	calls := []limiter.Call{{Key: key, Now: time.Now()}, {Key: key, Now: time.Now()}}
	b.Do(ctx, calls)
	for _, c := range calls {
		if c.Err != nil || !c.Decision.Allowed {
			t.Fatalf("acquire: %+v, %v; want admitted", c.Decision, c.Err)
		}
	}
	if _, _, err := cluster.MigrateSlot(ctx, key); err != nil {
		t.Fatal(err)
	}
	seen.taken()
	releases := []limiter.Call{{Key: key, Release: true, Decision: calls[0].Decision}, {Key: key, Release: true, Decision: calls[1].Decision}}
	b.Do(ctx, releases)
	for _, c := range releases {
		if c.Err != nil {
			t.Fatalf("release after the move: %v", c.Err)
		}
	}
	if n, err := cc.ZCard(ctx, key).Result(); err != nil || n != 0 {
		t.Fatalf("after both releases the set holds %d members (%v); want none", n, err)
	}
}

// A batch told its rounds carry one call each (a worker's own) sends them through rueidis,
// which pipelines many workers' rounds on one connection per master, and dials no master.
func TestABatchOfOneCallARoundGoesThroughRueidis(t *testing.T) {
	cc := redistest.SharedCluster(t).Client(t)
	cfg, seen, d := nodesOn(t, cc)
	big := bigConfig(limiter.FixedWindow, limiter.Lua)
	cfg.Limit, cfg.Window = big.Limit, big.Window
	lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	defer b.Close()
	b.OneCallARound()
	keys := clusterKeys(t, 3)
	for _, k := range keys {
		roundOf(t, b, []string{k}, 1)
	}
	if n := seen.taken(); n != len(keys) {
		t.Errorf("%d of %d calls went through rueidis; want every one", n, len(keys))
	}
	if len(d.by) != 0 {
		t.Errorf("dialled %v; want no master's own connection", d.by)
	}
}

// A master whose connection cannot be dialled fails its own calls of the round, each with the
// dial's error classified as a lost connection, and no other master's; once it can be dialled
// again (and the dial's back-off has passed) every call is answered.
func TestANodesBatchFailsOnlyTheCallsOfAMasterItCannotReach(t *testing.T) {
	cluster := redistest.SharedCluster(t)
	cc := cluster.Client(t)
	cfg, _, _ := nodesOn(t, cc)
	big := bigConfig(limiter.FixedWindow, limiter.Lua)
	cfg.Limit, cfg.Window = big.Limit, big.Window
	down := cluster.Masters[0].Addr
	var refuse atomic.Bool
	refuse.Store(true)
	cfg.Nodes.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == down && refuse.Load() {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	lim, err := limiter.New(limiter.FixedWindow, limiter.Lua, cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := limiter.NewBatch(lim)
	defer b.Close()
	ctx := context.Background()
	keys := clusterKeys(t, 12)
	onDown := map[string]bool{}
	for _, k := range keys {
		m, err := cc.MasterForKey(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		onDown[k] = m.Options().Addr == down
	}
	calls := make([]limiter.Call, len(keys))
	for i, k := range keys {
		calls[i] = limiter.Call{Key: k, Now: time.Now()}
	}
	b.Do(ctx, calls)
	failed := 0
	for _, c := range calls {
		switch {
		case onDown[c.Key] && rediserr.Classify(c.Err) != rediserr.Connection:
			t.Errorf("%s on the master that cannot be reached: %v, want a lost connection", c.Key, c.Err)
		case !onDown[c.Key] && c.Err != nil:
			t.Errorf("%s on a master that can be reached: %v", c.Key, c.Err)
		}
		if c.Err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no key of the test is on the master that cannot be reached")
	}
	refuse.Store(false)
	time.Sleep(150 * time.Millisecond) // past the dial's back-off
	roundOf(t, b, keys, len(keys))
}
