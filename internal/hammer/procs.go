package hammer

import (
	"context"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/embedded"
)

// Leaving the servers their cores. A Redis node runs its commands on one thread; a load test
// on one machine (a laptop, a CI runner, a 3-master cluster on two cores) shares the cores
// with every node it loads. The Go runtime sizes its scheduler to every core, and a client
// whose goroutines park and wake a few hundred thousand times a second (a round's reply,
// each connection's) then spends a quarter of its CPU finding and waking threads on the cores
// the servers need, which redis-benchmark, one thread, never does. So when every node the load
// goes to is a process on this machine's loopback, the hammer schedules on the cores the nodes
// leave it: the cores it would use less one a node, at least one (make bench-hammer: on two
// cores, a 3-master cluster's client CPU per decision fell from 1.78x redis-benchmark's to
// 1.52x, its throughput rose from 0.76x to 0.89x). Not with HTTP targets (an application's
// cores are its own business, and net/http's client needs more than one: 0.65x vegeta's rate
// on one core against 0.81x), not against the in-process server (it needs cores of this
// process), and never over GOMAXPROCS set by the user.
func (s *session) leaveServersTheirCores(ctx context.Context) (restore func()) {
	restore = func() {}
	if s.deps.Procs == nil || os.Getenv("GOMAXPROCS") != "" || len(s.opts.HTTP) > 0 || s.rdb == nil {
		return restore
	}
	if s.spawned != nil && s.spawned.Kind == embedded.KindMemory {
		return restore
	}
	nodes, ok := loopbackNodes(ctx, s.rdb, s.deps.Timeout)
	if !ok {
		return restore
	}
	// Of the cores the runtime schedules on already (GOMAXPROCS: the machine's, or fewer in a
	// container whose CPU quota is lower), never more.
	return s.deps.Procs(max(1, runtime.GOMAXPROCS(0)-nodes))
}

// loopbackNodes counts the nodes rdb sends commands to (a cluster's masters, as the trace finds
// them), and says whether every one is on a loopback address; a Sentinel's client (its Addr
// "FailoverClient", no host of its own: its master may move) is not.
func loopbackNodes(ctx context.Context, rdb redis.UniversalClient, timeout time.Duration) (int, bool) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nodes, err := traceNodes(ctx, rdb)
	if err != nil || len(nodes) == 0 {
		return 0, false
	}
	for _, n := range nodes {
		if !loopback(n.Addr) {
			return 0, false
		}
	}
	return len(nodes), true
}

// loopback says whether addr (host:port) is on this machine's loopback.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
