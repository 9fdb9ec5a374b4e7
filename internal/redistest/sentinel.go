package redistest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/embedded"
)

// SentinelMaster is the name StartSentinel's Sentinels monitor.
const SentinelMaster = "limitctl-master"

// SentinelSet is a master, its replica and three Sentinels monitoring them (quorum 2), all
// throw-away processes on loopback ports.
type SentinelSet struct {
	Name      string
	Nodes     []*Server // the master and the replica, in the roles they started with
	Sentinels []*Server
	SentinelOptions
}

// SentinelOptions add passwords: the data nodes' (requirepass, which the replica and the
// Sentinels use too) and the Sentinels' own.
type SentinelOptions struct {
	Password         string
	SentinelPassword string
	// NoHello renames HELLO away on the data nodes: with Password, they look to a client as
	// password-only servers older than 6 do (StartPasswordOnly).
	NoHello bool
}

// StartSentinel runs a master and a replica, then three Sentinels, and waits until every
// Sentinel sees the replica online and the other two. Everything stops when the test ends.
func StartSentinel(t testing.TB, opts SentinelOptions) *SentinelSet {
	t.Helper()
	s := &SentinelSet{Name: SentinelMaster, SentinelOptions: opts}
	t.Cleanup(s.Stop)
	var extra []string
	if opts.Password != "" {
		extra = []string{"requirepass " + opts.Password, "masterauth " + opts.Password}
	}
	if opts.NoHello {
		extra = append(extra, `rename-command HELLO ""`)
	}
	master := StartNoCleanup(t, extra...)
	s.Nodes = append(s.Nodes, master)
	s.Nodes = append(s.Nodes, StartNoCleanup(t, append([]string{"replicaof 127.0.0.1 " + strconv.Itoa(master.Port)}, extra...)...))
	conf := []string{
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2", s.Name, master.Port),
		// Every failover the tests make is asked for (SENTINEL FAILOVER); a master slow to
		// answer on a starved machine must not be failed over on its own mid-test.
		"sentinel down-after-milliseconds " + s.Name + " 10000",
		"sentinel failover-timeout " + s.Name + " 10000",
		"sentinel parallel-syncs " + s.Name + " 1",
	}
	if opts.Password != "" {
		conf = append(conf, "sentinel auth-pass "+s.Name+" "+opts.Password)
	}
	if opts.SentinelPassword != "" { // its own, and the one it gives the other Sentinels
		conf = append(conf, "requirepass "+opts.SentinelPassword, "sentinel sentinel-pass "+opts.SentinelPassword)
	}
	for i := 0; i < 3; i++ {
		p, err := embedded.StartSentinel(Binary(t), conf...)
		if err != nil {
			t.Fatal(err)
		}
		s.Sentinels = append(s.Sentinels, &Server{p})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.settle(ctx, s.Nodes[1].Addr); err != nil {
		t.Fatalf("Sentinels did not settle: %v", err)
	}
	return s
}

// Stop stops every process.
func (s *SentinelSet) Stop() {
	for _, p := range append(append([]*Server{}, s.Sentinels...), s.Nodes...) {
		p.Stop()
	}
}

// Addrs lists the Sentinels' addresses.
func (s *SentinelSet) Addrs() []string {
	out := make([]string, len(s.Sentinels))
	for i, p := range s.Sentinels {
		out[i] = p.Addr
	}
	return out
}

// URL is the redis+sentinel:// URL of the set.
func (s *SentinelSet) URL() string {
	return "redis+sentinel://" + strings.Join(s.Addrs(), ",") + "/" + s.Name
}

func (s *SentinelSet) sentinel(i int) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[i].Addr, Password: s.SentinelPassword})
}

// NodeClient is a client of one data node, closed at the end of the test.
func (s *SentinelSet) NodeClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: s.Password})
	t.Cleanup(func() { c.Close() })
	return c
}

// MasterAddr is the master's address as the first Sentinel says it is now.
func (s *SentinelSet) MasterAddr(t testing.TB) string {
	t.Helper()
	sc := s.sentinel(0)
	defer sc.Close()
	m, err := sc.GetMasterAddrByName(context.Background(), s.Name).Result()
	if err != nil {
		t.Fatalf("SENTINEL get-master-addr-by-name: %v", err)
	}
	return net.JoinHostPort(m[0], m[1])
}

// Node is the data node at addr.
func (s *SentinelSet) Node(t testing.TB, addr string) *Server {
	t.Helper()
	for _, n := range s.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	t.Fatalf("no node at %s", addr)
	return nil
}

// Failover forces a failover (SENTINEL FAILOVER, as an operator would) and waits until every
// Sentinel names the other node as master and it says so itself; it returns the new master.
func (s *SentinelSet) Failover(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old := s.MasterAddr(t)
	var promoted string
	for _, n := range s.Nodes {
		if n.Addr != old {
			promoted = n.Addr
		}
	}
	sc := s.sentinel(0)
	defer sc.Close()
	for {
		err := sc.Failover(ctx, s.Name).Err()
		if err == nil {
			break
		}
		// NOGOODSLAVE while the Sentinel still refreshes what it knows of the replica.
		if ctx.Err() != nil {
			t.Fatalf("SENTINEL FAILOVER: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := s.waitMaster(ctx, promoted); err != nil {
		t.Fatalf("after SENTINEL FAILOVER: %v", err)
	}
	return promoted
}

// PlannedFailover is a failover that loses nothing the old master acknowledged, as an operator
// plans one: writes on the old master are paused (and stay paused until the test ends), the
// replica is waited for until it has every write the master made, and then the Sentinels fail
// over. A plain SENTINEL FAILOVER (Failover) promotes a replica of asynchronous replication:
// the old master goes on deciding until the clients hear +switch-master, and what it wrote in
// that gap is lost, so a correct limiter can really admit more than its limit across it.
func (s *SentinelSet) PlannedFailover(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old := s.NodeClient(t, s.MasterAddr(t))
	if err := old.Do(ctx, "CLIENT", "PAUSE", 300000, "WRITE").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE on the master: %v", err)
	}
	for {
		mo, err1 := replOffset(ctx, old)
		var ro int64 = -1
		var err2 error
		for _, n := range s.Nodes {
			if n.Addr != old.Options().Addr {
				ro, err2 = replOffset(ctx, s.NodeClient(t, n.Addr))
			}
		}
		if err1 == nil && err2 == nil && ro >= mo {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the replica never caught up with the paused master (offsets %d, %d: %v %v)", mo, ro, err1, err2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s.Failover(t)
}

// replOffset is a node's replication offset: master_repl_offset on a master, what a replica has
// processed (slave_repl_offset) on a replica.
func replOffset(ctx context.Context, c *redis.Client) (int64, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	field := "master_repl_offset:"
	if strings.Contains(info, "role:slave") {
		field = "slave_repl_offset:"
	}
	_, rest, ok := strings.Cut(info, field)
	if !ok {
		return 0, fmt.Errorf("no %s in INFO replication", field)
	}
	end := strings.IndexAny(rest, "\r\n")
	if end < 0 {
		end = len(rest)
	}
	return strconv.ParseInt(rest[:end], 10, 64)
}

// settle waits until every Sentinel knows the replica at replica, online, and the two other
// Sentinels: a Sentinel that knows no good replica refuses to fail over.
func (s *SentinelSet) settle(ctx context.Context, replica string) error {
	for i := range s.Sentinels {
		sc := s.sentinel(i)
		defer sc.Close()
		for {
			replicas, err1 := sc.Replicas(ctx, s.Name).Result()
			others, err2 := sc.Sentinels(ctx, s.Name).Result()
			known := false
			for _, r := range replicas {
				if net.JoinHostPort(r["ip"], r["port"]) == replica && r["flags"] == "slave" && r["master-link-status"] == "ok" {
					known = true
				}
			}
			if err1 == nil && err2 == nil && known && len(others) == len(s.Sentinels)-1 {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("Sentinel %s: replicas %v (%v), %d other Sentinels (%v)", s.Sentinels[i].Addr, replicas, err1, len(others), err2)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// waitMaster waits until every Sentinel names addr as the master and the node there is one.
func (s *SentinelSet) waitMaster(ctx context.Context, addr string) error {
	node := redis.NewClient(&redis.Options{Addr: addr, Password: s.Password})
	defer node.Close()
	for i := range s.Sentinels {
		sc := s.sentinel(i)
		defer sc.Close()
		for {
			m, err := sc.GetMasterAddrByName(ctx, s.Name).Result()
			if err == nil && net.JoinHostPort(m[0], m[1]) == addr {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("Sentinel %s still names %v (%v), not %s", s.Sentinels[i].Addr, m, err, addr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for {
		info, err := node.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "role:master") {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s never said role:master (%v)", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
