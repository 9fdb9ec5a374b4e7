// Package holdtest runs a test of the test binary as a process of its own that holds what it
// started (servers, a terminal) until its stdin closes, so a test can kill it with SIGKILL as a
// CI job's timeout kills go test, and see what it leaves.
package holdtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// env names, in a holder's environment, what it holds.
const env = "LIMITCTL_HOLD"

// What is what this process is to hold, or "" when it is not a holder (the holding test skips).
func What() string { return os.Getenv(env) }

// Hold says this holder is ready and returns when its stdin closes.
func Hold() {
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
}

// Start runs the test named test of this binary as a holder of what, with dir as its temporary
// folder, and returns it once ready, with its stdin: closing it lets go. It is killed when t ends.
func Start(t testing.TB, test, what, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+what, "TMPDIR="+dir)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var said []string
	for lines := bufio.NewScanner(stdout); len(said) == 0 || said[len(said)-1] != "ready"; {
		if !lines.Scan() {
			t.Fatalf("the holder ended before it was ready:\n%s", strings.Join(said, "\n"))
		}
		said = append(said, lines.Text())
	}
	go io.Copy(io.Discard, stdout)
	return cmd, stdin
}
