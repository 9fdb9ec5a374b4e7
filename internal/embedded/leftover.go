package embedded

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// folderPrefix starts the name of each redis-server's folder under os.TempDir(), followed by its
// owner's tag (orphan.Name).
const folderPrefix = "limitctl-redis-"

// serverFile, in a server's folder, holds the server's pid and port, for a later run to stop
// it should it outlive its owner.
const serverFile = "server"

// sweepOnce has the first start of a process remove the folders that dead processes left.
var sweepOnce sync.Once

// recordServer writes the server's pid and port into its folder. It is best effort: only a
// later run's stop of a server that outlived its owner reads it.
func recordServer(dir string, pid, port int) {
	os.WriteFile(filepath.Join(dir, serverFile), fmt.Appendf(nil, "%d %d\n", pid, port), 0o600)
}

// removeLeftover removes the folder of a dead owner, first stopping its redis-server where that
// outlived the owner (where the kernel does not kill a child with its parent). A link by that
// name is only removed: it could lead to a living server's folder.
func removeLeftover(dir string) {
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		stopSurvivor(dir)
	}
	os.RemoveAll(dir)
}

// stopSurvivor shuts down the server recorded in dir only if it is still that server: the
// process on the recorded port says it has the recorded pid and runs from dir. A server that
// asks for a password cannot say so, and is left.
func stopSurvivor(dir string) {
	var pid, port int
	b, err := os.ReadFile(filepath.Join(dir, serverFile))
	if err != nil {
		return
	}
	if _, err := fmt.Sscan(string(b), &pid, &port); err != nil {
		return
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return // nothing listens: the usual case, the server died with its owner
	}
	conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, PoolSize: 1})
	defer rdb.Close()
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil || info["Server"]["process_id"] != strconv.Itoa(pid) {
		return
	}
	workDir, err := rdb.ConfigGet(ctx, "dir").Result()
	want, _ := filepath.EvalSymlinks(dir) // the server's getcwd resolves links (macOS's /var)
	if err != nil || workDir["dir"] != want {
		return
	}
	rdb.ShutdownNoSave(ctx)
}
