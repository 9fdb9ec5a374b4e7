package redistest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/holdtest"
)

func TestHolder(t *testing.T) {
	switch holdtest.What() {
	case "":
		t.Skip("run by the tests below as a process of its own")
	case "cluster":
		defer StartClusterNoCleanup(t, 3, 0).Stop()
	case "server":
		defer StartNoCleanup(t).Stop()
	}
	holdtest.Hold()
}

// A test binary killed with SIGKILL (as go test's -timeout or a CI job's timeout kills) takes
// its cluster with it, and the next process to start a server removes the folders it left.
func TestAKilledOwnersClusterDiesWithItAndTheNextStartSweepsItsFolders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux kills a child with its parent; elsewhere the next start stops it")
	}
	if testing.Short() {
		t.Skip("a cluster takes seconds to form")
	}
	dir := t.TempDir()
	holder, _ := holdtest.Start(t, "TestHolder", "cluster", dir)
	nodes := ProcessesIn(t, dir)
	if len(nodes) != 3 {
		t.Fatalf("want the 3 nodes running from %s, found %v", dir, nodes)
	}
	owned := fmt.Sprintf("limitctl-redis-%d-", holder.Process.Pid)
	for _, folder := range nodes {
		if !strings.HasPrefix(folder, owned) {
			t.Errorf("folder %s does not name its owner (%s...)", folder, owned)
		}
	}
	holder.Process.Kill()
	holder.Wait()
	WaitGone(t, 10*time.Second, nodes)
	if left, _ := filepath.Glob(filepath.Join(dir, "limitctl-redis-*")); len(left) != 3 {
		t.Fatalf("want the killed holder's 3 folders left for the next start, found %v", left)
	}

	next, stdin := holdtest.Start(t, "TestHolder", "server", dir)
	stdin.Close()
	if err := next.Wait(); err != nil {
		t.Fatalf("the next holder: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "limitctl-redis-*")); len(left) != 0 {
		t.Errorf("folders left after the next start: %v", left)
	}
}
