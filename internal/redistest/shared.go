package redistest

import (
	"os"
	"sync"
	"testing"
)

// A package whose tests each write under keys of their own can share one server, and one
// 3-master cluster (which takes seconds to form), for the whole test binary: Shared and
// SharedCluster start them on first use, and Main, the package's TestMain, stops them after
// the tests.
var shared struct {
	serverOnce, clusterOnce sync.Once
	server                  *Server
	cluster                 *Cluster
	underMain               bool // the tests run under Main, which stops the servers
}

// Shared is the test binary's shared single server.
func Shared(t testing.TB) *Server {
	t.Helper()
	requireMain(t)
	shared.serverOnce.Do(func() { shared.server = StartNoCleanup(t) })
	if shared.server == nil {
		t.Fatal("the shared redis-server did not start")
	}
	return shared.server
}

// SharedCluster is the test binary's shared cluster of 3 masters without replicas.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	requireMain(t)
	shared.clusterOnce.Do(func() { shared.cluster = StartClusterNoCleanup(t, 3, 0) })
	if shared.cluster == nil {
		t.Fatal("the shared cluster did not start")
	}
	return shared.cluster
}

// requireMain fails a test whose package would leave its shared servers running.
func requireMain(t testing.TB) {
	t.Helper()
	if !shared.underMain {
		t.Fatal("a shared server needs the package's TestMain to call redistest.Main, which stops it")
	}
}

// Main runs the tests and then stops the shared servers: call it from TestMain.
func Main(m *testing.M) {
	shared.underMain = true
	code := m.Run()
	if shared.server != nil {
		shared.server.Stop()
	}
	if shared.cluster != nil {
		shared.cluster.Stop()
	}
	os.Exit(code)
}
