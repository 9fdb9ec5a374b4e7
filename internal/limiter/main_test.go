package limiter_test

import (
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// server is the redis-server this package's tests share; each test uses its own keys.
func server(t *testing.T) *redistest.Server { return redistest.Shared(t) }

func TestMain(m *testing.M) { redistest.Main(m) }
