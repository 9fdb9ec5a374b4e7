package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A hammer killed with SIGKILL mid-run (as an OOM killer or a CI job's timeout kills) takes its
// throw-away redis-server with it, and the next run removes the folder it left.
func TestAHammerKilledMidRunLeavesNoServerAndTheNextRunSweepsItsFolder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux kills a child with its parent; elsewhere the next run stops it")
	}
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	cmd, _, errOut := startBinaryEnv(t, env, "hammer", "--embedded", "redis-server", "--duration", "60s", "--tui", "off")
	target := regexp.MustCompile(`throw-away redis-server \S+ on (127\.0\.0\.1:\d+)`)
	waitUntil(t, 20*time.Second, "the throw-away server's address", func() bool { return target.MatchString(errOut.String()) }, errOut)
	rdb := redis.NewClient(&redis.Options{Addr: target.FindStringSubmatch(errOut.String())[1]})
	defer rdb.Close()
	waitUntil(t, 20*time.Second, "the load under way (lua's key written)", func() bool {
		return len(rdb.Keys(context.Background(), "limitctl:*:lua").Val()) > 0
	}, errOut)
	servers := redistest.ProcessesIn(t, tmp)
	if len(servers) != 1 {
		t.Fatalf("want the one redis-server running from %s, found %v", tmp, servers)
	}
	for _, folder := range servers {
		if owned := fmt.Sprintf("limitctl-redis-%d-", cmd.Process.Pid); !strings.HasPrefix(folder, owned) {
			t.Errorf("folder %s does not name its owner (%s...)", folder, owned)
		}
	}

	cmd.Process.Kill()
	cmd.Wait()
	redistest.WaitGone(t, 10*time.Second, servers)
	left, _ := filepath.Glob(filepath.Join(tmp, "limitctl-redis-*"))
	if len(left) != 1 {
		t.Fatalf("want the killed run's folder left for the next run, found %v", left)
	}

	next := execBinary(t, env, "hammer", "--embedded", "redis-server", "--duration", "300ms", "--tui", "off")
	if !target.MatchString(next.errOut) {
		t.Fatalf("the next run did not start a throw-away server:\n%s", next.errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "limitctl-redis-*")); len(left) != 0 {
		t.Errorf("folders left after the next run: %v\n%s", left, next.errOut)
	}
}
