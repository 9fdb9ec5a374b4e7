package hammer

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
)

// A run whose every node is a process on this machine's loopback schedules on the cores the
// nodes leave it (at least one) while it loads, and sets the process back after: one node, or
// a cluster's three masters; a run that asks nothing of the process (nil Procs, as in tests)
// or whose user set GOMAXPROCS is left alone.
func TestALoopbackRunLeavesTheServersTheirCores(t *testing.T) {
	srv := redistest.Start(t)
	cluster := redistest.StartCluster(t, 3, 0)
	for _, c := range []struct {
		name  string
		deps  Deps
		nodes int
	}{
		{"one node", Deps{Connect: connectTo(t, srv)}, 1},
		{"three masters", Deps{Connect: connectCluster(t, cluster)}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []int
			restored := 0
			c.deps.Timeout = 5 * time.Second
			c.deps.Procs = func(n int) func() {
				asked = append(asked, n)
				return func() { restored++ }
			}
			o := baseOptions()
			o.Strategies, o.Workers, o.Duration = []limiter.Strategy{limiter.Lua}, 4, 300*time.Millisecond
			if _, err := Run(context.Background(), o, c.deps); err != nil {
				t.Fatal(err)
			}
			want := max(1, runtime.GOMAXPROCS(0)-c.nodes)
			if len(asked) != 1 || asked[0] != want || restored != 1 {
				t.Fatalf("asked for %v cores (set back %d times); want [%d] of %d, set back once", asked, restored, want, runtime.GOMAXPROCS(0))
			}
			t.Setenv("GOMAXPROCS", "2")
			asked = nil
			if _, err := Run(context.Background(), o, c.deps); err != nil {
				t.Fatal(err)
			}
			if len(asked) != 0 {
				t.Fatalf("GOMAXPROCS set by the user, and the run asked for %v cores", asked)
			}
		})
	}
}

// Only an address on this machine's loopback is a server sharing its cores.
func TestLoopbackAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:6379": true, "127.0.0.2:7000": true, "[::1]:6379": true, "localhost:6379": true,
		"10.0.0.5:6379": false, "redis.internal:6379": false, "[2001:db8::1]:6379": false, "no-port": false,
		"FailoverClient": false, // a Sentinel's client: its master may be anywhere
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
