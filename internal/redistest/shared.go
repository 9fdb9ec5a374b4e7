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
}

// Shared is the test binary's shared single server.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.serverOnce.Do(func() { shared.server = StartNoCleanup(t) })
	if shared.server == nil {
		t.Fatal("the shared redis-server did not start")
	}
	return shared.server
}

// SharedCluster is the test binary's shared cluster of 3 masters without replicas.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	shared.clusterOnce.Do(func() { shared.cluster = StartClusterNoCleanup(t, 3, 0) })
	if shared.cluster == nil {
		t.Fatal("the shared cluster did not start")
	}
	return shared.cluster
}

// Main runs the tests and then stops the shared servers: call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.server != nil {
		shared.server.Stop()
	}
	if shared.cluster != nil {
		shared.cluster.Stop()
	}
	os.Exit(code)
}
