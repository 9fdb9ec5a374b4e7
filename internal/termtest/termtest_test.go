package termtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/holdtest"
)

func TestHolder(t *testing.T) {
	if holdtest.What() == "" {
		t.Skip("run by the test below as a process of its own")
	}
	Start(t, 40, 10, "echo held; sleep 600").WaitForText(10*time.Second, "held")
	holdtest.Hold()
}

// tmux runs as a daemon, so a test killed with SIGKILL (go test's -timeout) leaves its terminal
// running; the next test process to open one ends it.
func TestAKilledTestsTerminalIsEndedByTheNextTestProcess(t *testing.T) {
	dir, err := os.MkdirTemp("", "tt") // short: a socket's path is at most about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	killed, _ := holdtest.Start(t, "TestHolder", "terminal", dir)
	sockets, _ := filepath.Glob(filepath.Join(dir, socketPrefix+"*"))
	if len(sockets) != 1 {
		t.Fatalf("want the holder's one tmux socket in %s, found %v", dir, sockets)
	}
	t.Cleanup(func() { killServer(sockets[0]) })
	killed.Process.Kill()
	killed.Wait()
	if err := exec.Command("tmux", "-S", sockets[0], "has-session").Run(); err != nil {
		t.Fatalf("the killed holder's terminal is gone already (%v): nothing left to sweep", err)
	}

	next, stdin := holdtest.Start(t, "TestHolder", "terminal", dir)
	stdin.Close()
	if err := next.Wait(); err != nil {
		t.Fatalf("the next holder: %v", err)
	}
	if err := exec.Command("tmux", "-S", sockets[0], "has-session").Run(); err == nil {
		t.Error("the killed holder's tmux server still runs after the next test process opened a terminal")
	}
	if _, err := os.Stat(sockets[0]); !os.IsNotExist(err) {
		t.Errorf("its socket is still there: %v", err)
	}
}
