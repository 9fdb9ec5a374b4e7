package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A hammer killed with SIGKILL leaves its held requests in the limiter and in the shared
// witness; the next run with the same id must not blame a correct lua for those ghosts.
func TestRedisWitnessAfterAKilledRunBlamesNoGhosts(t *testing.T) {
	srv := redistest.Start(t)
	args := func(d string) []string {
		return []string{"--addr", srv.Addr, "hammer", "--run-id", "ghosts", "--witness", "redis", "--strategies", "lua",
			"--workers", "32", "--limit", "20", "--hold", "50ms", "--stale-after", "1s", "--duration", d, "--keep-keys", "-o", "json"}
	}
	killed, _, errOut := startBinary(t, args("60s")...)
	rdb := srv.Client(t)
	deadline := time.Now().Add(20 * time.Second)
	for rdb.ZCard(context.Background(), "limitctl:{ghosts}:lua").Val() < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("the first run never held 10 requests\n%s", errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed.Process.Kill()
	killed.Wait()
	if n := rdb.Exists(context.Background(), "limitctl:{ghosts}:lua:witness").Val(); n != 1 {
		t.Fatalf("the killed run left no witness behind; the test proves nothing")
	}
	// Past stale-after the limiter has forgotten the ghosts; the witness must forget them too.
	time.Sleep(1500 * time.Millisecond)
	r := execBinary(t, nil, append(args("2s"), "--assert", "lua.overshoot==0")...)
	if r.code != ExitOK {
		t.Fatalf("exit %d after a killed run's leftovers\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errOut)
	}
	if !strings.Contains(r.out, `"overshoot": 0`) && !strings.Contains(r.out, `"overshoot":0`) {
		t.Fatalf("no overshoot 0 in the summary:\n%s", r.out)
	}
}
