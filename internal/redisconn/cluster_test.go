package redisconn

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// incrScript counts how many times Redis ran it: a decision sent twice shows as 2.
var incrScript = redis.NewScript(`return redis.call('INCR', KEYS[1])`)

// busyScript keeps its node busy for ARGV[1] ms: commands sent meanwhile wait in the socket and
// run afterwards, even when their client gave up and closed the connection.
const busyScript = `local t0 = redis.call('TIME')
local start = t0[1] * 1000 + math.floor(t0[2] / 1000)
while true do
  local t = redis.call('TIME')
  if t[1] * 1000 + math.floor(t[2] / 1000) - start >= tonumber(ARGV[1]) then return 1 end
end`

// busyFor occupies the node that serves key for d and returns once the script holds it: a
// PING on a connection of its own stops answering. (A fixed 100ms wait assumed the script's
// EVAL reached the server that soon; beside another load it did not, and the decision ran first.)
func busyFor(t *testing.T, cl *redistest.Cluster, key string, d time.Duration) <-chan error {
	t.Helper()
	ctx := context.Background()
	master, err := cl.Client(t).MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- master.Eval(ctx, busyScript, []string{"{busy}"}, d.Milliseconds()).Err()
	}()
	probe := redis.NewClient(&redis.Options{Addr: master.Options().Addr, ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	defer probe.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case err := <-done:
			t.Fatalf("the busy script ended before a PING was held up by it: %v", err)
		default:
		}
		if err := probe.Ping(ctx).Err(); err != nil { // held up: the script is running
			return done
		}
		if time.Now().After(deadline) {
			t.Fatal("the busy script never held its node")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// decisions are the ways a limiter decision reaches a cluster: each increments KEYS[1] once.
var decisions = []struct {
	name string
	send func(ctx context.Context, rdb redis.UniversalClient, key string) error
}{
	{"evalsha", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
		return incrScript.EvalSha(ctx, rdb, []string{key}).Err()
	}},
	{"fcall", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
		return rdb.FCall(ctx, "sentonce_incr", []string{key}).Err()
	}},
	{"multi-exec", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { return p.Incr(ctx, key).Err() })
		return err
	}},
	{"incr", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
		return rdb.Incr(ctx, key).Err()
	}},
}

const incrLibrary = "#!lua name=sentonce\n" +
	"redis.register_function('sentonce_incr', function(keys) return redis.call('INCR', keys[1]) end)"

func TestClusterDecisionIsSentOnceAfterReadTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test runs it, make test-short (-short) skips it")
	}
	cl := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	check := cl.Client(t)
	for _, m := range cl.Masters {
		c := m.Client(t)
		if err := c.FunctionLoadReplace(ctx, incrLibrary).Err(); err != nil {
			t.Fatal(err)
		}
		if err := incrScript.Load(ctx, c).Err(); err != nil {
			t.Fatal(err)
		}
	}
	const timeout = 200 * time.Millisecond
	for _, target := range []struct {
		name string
		opts Options
	}{
		{"cluster flags", Options{Addrs: cl.Addrs(), Timeout: timeout}},
		// One --addr that turns out to be a cluster node is opened as a cluster.
		{"one node found to be a cluster", Options{Addrs: cl.Addrs()[:1], Timeout: timeout, NoCheckoutProbe: true}},
	} {
		for _, d := range decisions {
			if target.opts.NoCheckoutProbe && d.name != "evalsha" {
				continue // the hook sits on the cluster client, whatever dials its nodes
			}
			t.Run(target.name+"/"+d.name, func(t *testing.T) {
				// A 200ms timeout is the point of the test, but connecting within it is not: on a
				// busy machine the first try may miss it, so try until it connects (bounded).
				var rdb redis.UniversalClient
				var got Target
				var err error
				for try := 0; try < 20; try++ {
					if rdb, got, err = Open(ctx, target.opts, func(string) string { return "" }); err == nil {
						break
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				defer rdb.Close()
				if got.Kind != "cluster" {
					t.Fatalf("target kind %q, want cluster", got.Kind)
				}
				key := "{once}:" + target.name + "/" + d.name
				// Warm the slot map and open several connections: a retry would take one the
				// server already accepted, so a re-sent copy would run.
				openConns(t, rdb, key, 6)
				busy := busyFor(t, cl, key, 3*time.Second)
				if err := d.send(ctx, rdb, key); err == nil {
					t.Fatal("a decision behind a 3s busy script answered within a 200ms read timeout")
				}
				if err := <-busy; err != nil {
					t.Fatal(err)
				}
				// Every copy that reached the server runs right after the busy script.
				time.Sleep(300 * time.Millisecond)
				n, err := check.Get(ctx, key).Int64()
				if err != nil {
					t.Fatal(err)
				}
				if n != 1 {
					t.Fatalf("the decision ran %d times; a read timeout must not make the cluster client send it again", n)
				}
			})
		}
	}
}

// A decision sent on a stale slot map is still redirected: not retrying on network errors
// must not stop the client following MOVED.
func TestClusterDecisionFollowsMoved(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	for _, m := range cl.Masters {
		if err := incrScript.Load(ctx, m.Client(t)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb, _, err := Open(ctx, Options{Addrs: cl.Addrs()}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	key := "{moved}:k"
	if err := incrScript.EvalSha(ctx, rdb, []string{key}).Err(); err != nil {
		t.Fatal(err)
	}
	// Hand the key's (then empty) slot to another master behind the client's back.
	check := cl.Client(t)
	if err := check.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	slot, err := check.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	owner, err := check.MasterForKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var to string
	for _, m := range cl.Masters {
		if m.Addr != owner.Options().Addr {
			if to, err = m.Client(t).ClusterMyID(ctx).Result(); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	for _, m := range cl.Masters {
		if err := m.Client(t).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", to).Err(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := incrScript.EvalSha(ctx, rdb, []string{key}).Int64()
	if err != nil {
		t.Fatalf("EVALSHA after the slot moved: %v (MOVED must still be followed)", err)
	}
	if n != 1 {
		t.Fatalf("INCR after the move returned %d, want 1", n)
	}
}

// A single --addr that turns out to be a cluster node keeps the hammer's dialer.
func TestClusterFoundBehindOneAddrKeepsTheDialer(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	rdb, target, err := Open(context.Background(), Options{Addrs: cl.Addrs()[:1], NoCheckoutProbe: true}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok || target.Kind != "cluster" {
		t.Fatalf("got %T (%s), want a cluster client", rdb, target.Kind)
	}
	if cc.Options().Dialer == nil {
		t.Fatal("the cluster client dials with go-redis's default dialer, not the hammer's (no checkout probe)")
	}
}

// openConns makes the client hold n connections to the node of key, each accepted by the server.
func openConns(t *testing.T, rdb redis.UniversalClient, key string, n int) {
	t.Helper()
	// 10ms each: the calls overlap, so each needs a connection of its own. On a busy machine
	// n of them in a row may outlast the read timeout, which closes a connection: try again
	// until a round of n all answer (bounded), rather than assume they do.
	var last error
	for round := 0; round < 50; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- rdb.Eval(context.Background(), busyScript, []string{key}, 10).Err()
			}()
		}
		wg.Wait()
		close(errs)
		last = nil
		for err := range errs {
			last = cmp.Or(last, err)
		}
		if last == nil {
			return
		}
	}
	t.Fatalf("%d calls of 10ms never all answered within the read timeout: %v", n, last)
}
