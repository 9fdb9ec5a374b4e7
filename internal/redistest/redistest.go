// Package redistest starts throw-away redis-server processes on free loopback ports for tests:
// a single node, a cluster, a TLS server, a server with ACL users, a master and replica watched by
// three Sentinels. Each is stopped when the test ends.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/embedded"
)

// Server is one running redis-server.
type Server struct {
	*embedded.Process
}

// Binary returns the redis-server path, or fails the test: these tests exist to run against
// real Redis, so a missing server is a failure, never a skip.
func Binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: install it (make test does: apt-get install redis-server)")
	}
	return path
}

// FreePort finds a loopback port that is free now, and whose cluster bus port (+10000) is too.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := embedded.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Start runs a single redis-server with extra config directives (e.g. "maxmemory 10mb") and
// stops it when the test ends.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	s := StartNoCleanup(t, extra...)
	t.Cleanup(s.Stop)
	return s
}

// StartNoCleanup is Start for callers that own the lifetime (a TestMain, a cluster).
func StartNoCleanup(t testing.TB, extra ...string) *Server {
	t.Helper()
	p, err := embedded.StartProcess(Binary(t), extra...)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{p}
}

// Restart starts the server again on the same port after Kill.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if err := s.Process.Restart(); err != nil {
		t.Fatal(err)
	}
}

// Client returns a go-redis client for the server, closed at the end of the test.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 128})
	t.Cleanup(func() { c.Close() })
	return c
}

// URL is the redis:// address of the server.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Cluster is a running Redis Cluster of masters and replicas.
type Cluster struct {
	Masters  []*Server
	Replicas []*Server
}

// Addrs lists the masters' addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Masters))
	for i, m := range c.Masters {
		out[i] = m.Addr
	}
	return out
}

// Client returns a cluster client, closed at the end of the test.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), PoolSize: 128})
	t.Cleanup(func() { cc.Close() })
	return cc
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, s := range append(append([]*Server{}, c.Masters...), c.Replicas...) {
		s.Stop()
	}
}

// StartCluster runs a cluster of masters (each with replicasPerMaster replicas), slots split
// evenly, and waits until every node reports cluster_state:ok. It stops when the test ends.
func StartCluster(t testing.TB, masters, replicasPerMaster int) *Cluster {
	t.Helper()
	c := StartClusterNoCleanup(t, masters, replicasPerMaster)
	t.Cleanup(c.Stop)
	return c
}

// StartClusterNoCleanup is StartCluster for callers that own the lifetime (a TestMain).
func StartClusterNoCleanup(t testing.TB, masters, replicasPerMaster int) *Cluster {
	t.Helper()
	c := &Cluster{}
	node := func() *Server {
		return StartNoCleanup(t, "cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 2000")
	}
	for i := 0; i < masters; i++ {
		c.Masters = append(c.Masters, node())
	}
	for i := 0; i < masters*replicasPerMaster; i++ {
		c.Replicas = append(c.Replicas, node())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.form(ctx, replicasPerMaster); err != nil {
		c.Stop()
		t.Fatalf("cluster did not form: %v", err)
	}
	return c
}

func (c *Cluster) form(ctx context.Context, replicasPerMaster int) error {
	all := append(append([]*Server{}, c.Masters...), c.Replicas...)
	clients := make([]*redis.Client, len(all))
	for i, s := range all {
		clients[i] = redis.NewClient(&redis.Options{Addr: s.Addr})
		defer clients[i].Close()
	}
	per := 16384 / len(c.Masters)
	for i := range c.Masters {
		first, last := i*per, (i+1)*per-1
		if i == len(c.Masters)-1 {
			last = 16383
		}
		if err := clients[i].ClusterAddSlotsRange(ctx, first, last).Err(); err != nil {
			return fmt.Errorf("ADDSLOTSRANGE on %s: %w", c.Masters[i].Addr, err)
		}
	}
	for i := 1; i < len(all); i++ {
		if err := clients[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(all[i].Port)).Err(); err != nil {
			return fmt.Errorf("MEET %s: %w", all[i].Addr, err)
		}
	}
	// Replicas need their master known to them before REPLICATE.
	for r := range c.Replicas {
		master := clients[r/replicasPerMaster]
		id, err := master.ClusterMyID(ctx).Result()
		if err != nil {
			return err
		}
		rc := clients[len(c.Masters)+r]
		for {
			err = rc.ClusterReplicate(ctx, id).Err()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("REPLICATE on %s: %w", c.Replicas[r].Addr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, cl := range clients {
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && knownNodes(info) == len(all) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for cluster_state:ok: %v", ctx.Err())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Replicas must have synced before tests rely on them (status, failover).
	for i := range c.Replicas {
		cl := clients[len(c.Masters)+i]
		for {
			info, err := cl.Info(ctx, "replication").Result()
			if err == nil && strings.Contains(info, "master_link_status:up") {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("replica %s did not sync", c.Replicas[i].Addr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Every node must list every replica in CLUSTER SLOTS, which is what clients route by.
	for _, cl := range clients {
		for {
			slots, err := cl.ClusterSlots(ctx).Result()
			n := 0
			for _, s := range slots {
				n += len(s.Nodes)
			}
			if err == nil && n == len(all) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("CLUSTER SLOTS never listed all %d nodes", len(all))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func knownNodes(info string) int {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "cluster_known_nodes:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
