package limiter_test

import (
	"os"
	"sync"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

var (
	sharedOnce   sync.Once
	sharedServer *redistest.Server
)

// server returns one redis-server shared by this package's tests; each test uses its own keys.
func server(t *testing.T) *redistest.Server {
	t.Helper()
	sharedOnce.Do(func() { sharedServer = redistest.StartNoCleanup(t) })
	if sharedServer == nil {
		t.Fatal("shared redis-server failed to start")
	}
	return sharedServer
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedServer != nil {
		sharedServer.Stop()
	}
	os.Exit(code)
}
