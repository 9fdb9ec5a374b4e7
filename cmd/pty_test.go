package cmd

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A terminal that never answers a query (script's pseudo-terminal here; some CI runners and
// serial consoles are the same): no command may ask it anything, so none waits for an answer
// that never comes or prints the query, and the purge prompt reads exactly what was typed.
// (bubbletea v1 asked every command's terminal for its background colour at start-up: 5s
// lost, ^[]11;?^[\^[[6n printed, and the n typed at the prompt read by the probe.)
func TestNoCommandQueriesATerminalThatNeverAnswers(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatal("script (util-linux) is not on PATH: make test installs it")
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seedLimiterKeys(t, rdb)
	addr := " --addr " + srv.Addr
	for _, tc := range []struct {
		name, args, typed, want string
	}{
		{"scripts list", " scripts list", "", "concurrency_acquire"},
		{"version", " version", "", "limitctl"},
		{"inspect", addr + " inspect 'rl:*' --stale 10m", "", "rl:conc:u1"},
		{"lint", " lint ../scripts/concurrency_acquire.lua", "", ""},
		{"purge declined at the prompt", addr + " purge 'rl:*' --older-than 10m", "n\n", "nothing removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := inTerminal(t, binary(t)+tc.args, tc.typed)
			if strings.Contains(out, "\x1b") {
				t.Errorf("%s wrote escape sequences (a terminal query?) on a terminal:\n%q", tc.name, out)
			}
			if code != ExitOK || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want 0 and %q:\n%s", code, tc.want, out)
			}
		})
	}
	checkUntouched(t, rdb)
}

// inTerminal runs a shell command on a pseudo-terminal of its own (script -e), types typed
// into it, and returns everything the terminal showed (the echo of what was typed included)
// and the command's exit code.
func inTerminal(t *testing.T, command, typed string) (string, int) {
	t.Helper()
	cmd := exec.Command("script", "-qec", command, "/dev/null")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TERM=xterm-256color"}
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(keys, typed) // held open until the command ends: no end of input to read
	code := waitExit(t, cmd, time.Minute)
	keys.Close()
	return out.String(), code
}
