package keys

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/redistest"
)

var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestIsPattern(t *testing.T) {
	for arg, want := range map[string]bool{"rl:*": true, "rl:?": true, "rl:[ab]": true, "rl:user:1": false, "{x}:y": false} {
		if IsPattern(arg) != want {
			t.Errorf("IsPattern(%q) = %v", arg, !want)
		}
	}
}

// --clock names one of two clocks; the server's, when it cannot be read, says how to do
// without it, unless the caller gave up (Ctrl-C), where the hint would be noise.
func TestClockNames(t *testing.T) {
	var usage *exitcode.UsageError
	if _, err := ParseClockName("utc"); !errors.As(err, &usage) {
		t.Errorf("--clock utc: %v, want a usage error", err)
	}
	local, err := ParseClockName("local")
	if err != nil {
		t.Fatal(err)
	}
	if now, err := local.Clock(nil, func() time.Time { return fixedNow })(context.Background()); err != nil || !now.Equal(fixedNow) {
		t.Errorf("local clock = %v, %v; want %v", now, err, fixedNow)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(redistest.FreePort(t)), MaxRetries: -1})
	defer rdb.Close()
	server := ClockServer.Clock(rdb, nil)
	if _, err := server(context.Background()); err == nil || !strings.Contains(err.Error(), "--clock local") {
		t.Errorf("unreadable server TIME: %v, want the --clock local hint", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := server(ctx); err == nil || strings.Contains(err.Error(), "--clock local") {
		t.Errorf("cancelled: %v, want an error without the hint", err)
	}
}
