package embedded

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/orphan"
)

// deadOwnersServer runs a redis-server from a folder in dir named for an owner that is gone, as
// a killed run leaves it where the kernel does not kill the server with its owner; record says
// which pid the folder's record names (given the server's).
func deadOwnersServer(t *testing.T, dir string, record func(pid int) int) *Process {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not on PATH (make test installs it)")
	}
	owner := exec.Command(bin, "--version")
	if err := owner.Run(); err != nil {
		t.Fatal(err)
	}
	mine := orphan.Name(folderPrefix)
	folder := filepath.Join(dir, strings.Replace(mine, fmt.Sprint(os.Getpid()), fmt.Sprint(owner.Process.Pid), 1)+"1")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: folder, bin: bin,
		args: []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", folder, "--save", "", "--logfile", filepath.Join(folder, "redis.log")}}
	if err := p.launch(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	recordServer(folder, record(p.cmd.Process.Pid), port)
	return p
}

func TestTheNextStartStopsAServerThatOutlivedItsOwnerAndRemovesItsFolder(t *testing.T) {
	dir := t.TempDir()
	p := deadOwnersServer(t, dir, func(pid int) int { return pid })
	orphan.Sweep(dir, folderPrefix, removeLeftover)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server is still running 10s after the sweep")
	}
	if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
		t.Errorf("its folder is still there: %v", err)
	}
}

func TestTheNextStartLeavesAServerThatIsNotTheOneRecorded(t *testing.T) {
	dir := t.TempDir()
	p := deadOwnersServer(t, dir, func(pid int) int { return pid + 1 })
	orphan.Sweep(dir, folderPrefix, removeLeftover)
	conn, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatalf("a server whose pid is not the recorded one was stopped: %v", err)
	}
	conn.Close()
	if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
		t.Errorf("the dead owner's folder is still there: %v", err)
	}
}
