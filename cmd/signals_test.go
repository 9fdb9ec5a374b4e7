package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/termtest"
)

// Every long command stops within a second of SIGINT or SIGTERM, says what it did, exits 130.
func TestLongCommandsStopCleanlyOnSignals(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	seedStale := func(key string, n int) {
		old := float64(time.Now().Add(-time.Hour).UnixMilli())
		members := make([]redis.Z, 0, 10000)
		for i := 0; i < n; i++ {
			members = append(members, redis.Z{Score: old, Member: "req-" + strconv.Itoa(i)})
			if len(members) == cap(members) {
				rdb.ZAdd(ctx, key, members...)
				members = members[:0]
			}
		}
		rdb.ZAdd(ctx, key, members...)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run("purge/"+sig.String(), func(t *testing.T) {
			key := "rl:conc:{sig}:" + sig.String()
			seedStale(key, 200_000)
			// One member per script call: far longer than the test waits.
			cmd, out, errOut := startBinary(t, "--addr", srv.Addr, "purge", key, "--older-than", "1m", "--batch", "1", "-o", "json")
			waitUntil(t, 20*time.Second, "the purge under way", func() bool { return rdb.ZCard(ctx, key).Val() < 200_000 }, errOut)
			interrupt(t, cmd, sig, errOut)
			var rep struct {
				TotalRemoved int64 `json:"total_removed"`
				Keys         []struct{ Removed, Remaining int64 }
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Keys) != 1 {
				t.Fatalf("no report of what was done: %v\n%s\n%s", err, out, errOut)
			}
			left, _ := rdb.ZCard(ctx, key).Result()
			if rep.TotalRemoved == 0 || rep.Keys[0].Removed+left != 200_000 || rep.Keys[0].Remaining != left {
				t.Errorf("report says removed %d remaining %d; the set holds %d of 200000", rep.Keys[0].Removed, rep.Keys[0].Remaining, left)
			}
		})
		t.Run("inspect-watch/"+sig.String(), func(t *testing.T) {
			rdb.Set(ctx, "rl:counter:watch", 3, time.Minute)
			cmd, out, errOut := startBinary(t, "--addr", srv.Addr, "inspect", "rl:counter:*", "--watch", "200ms")
			waitUntil(t, 20*time.Second, "a refreshed report", func() bool { return strings.Count(out.String(), "rl:counter:watch") >= 2 }, out, errOut)
			interrupt(t, cmd, sig, errOut)
		})
	}
}

// A second Ctrl-C while the hammer is stopping or deleting its keys exits at once. Writes are
// paused on the server, so the clean-up's UNLINK would wait out the whole --timeout.
func TestSecondSignalDuringCleanupExitsAtOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	// Open loop at a low rate: the workers are idle when writes pause, so the first signal
	// stops the load at once and the time goes to the clean-up.
	cmd, _, errOut := startBinary(t, "--addr", srv.Addr, "--timeout", "8s", "hammer", "--limiter", "token-bucket", "--window", "60s", "--rate", "20", "--workers", "2",
		"--duration", "60s", "--tui", "off")
	ctx := context.Background()
	waitUntil(t, 20*time.Second, "the load under way (lua's key written)", func() bool { return len(rdb.Keys(ctx, "limitctl:*:lua").Val()) > 0 }, errOut)
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", 30000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	defer rdb.Do(ctx, "CLIENT", "UNPAUSE")
	cmd.Process.Signal(syscall.SIGINT)
	// The clean-up's UNLINK waits on the paused server: the moment for the second signal.
	waitUntil(t, 20*time.Second, "the clean-up waiting on the paused server", func() bool {
		return regexp.MustCompile(` flags=b .* cmd=unlink `).MatchString(rdb.ClientList(ctx).Val())
	}, errOut)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd, 20*time.Second); code != ExitInterrupted {
		t.Fatalf("exit %d after a second SIGINT, want 130\nstderr:\n%s", code, errOut)
	}
	// Generous for a loaded machine; without the fix the clean-up waits out --timeout (8s).
	if took := time.Since(sent); took > 3*time.Second {
		t.Errorf("took %s to exit after the second SIGINT\nstderr:\n%s", took, errOut)
	}
}

// Closing the terminal (SIGHUP, as tmux kill-session or a closed window sends) stops a run as
// SIGTERM does: the summary where it can still go, the throw-away redis-server stopped, its
// folder removed, exit 130. On the dashboard the summary has nowhere to go; with stdout
// redirected it is written whole.
func TestHangupStopsTheRunLikeSIGTERM(t *testing.T) {
	for _, tc := range []struct{ name, stdout string }{
		{"dashboard", ""},
		{"json to a file", " -o json > $DIR/out.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// The shell ignores SIGHUP so that it outlives the terminal and records the exit
			// code; limitctl, which asks for the signal, still gets it.
			script := fmt.Sprintf(`DIR=%s; trap '' HUP; TMPDIR=$DIR %s hammer --duration 60s%s 2> $DIR/err.txt; echo $? > $DIR/rc`,
				dir, binary(t), tc.stdout)
			// The terminal's own shell (the session leader, which the kernel sends SIGHUP
			// when the terminal closes) must not be the one that ignores it: it dies and
			// the hangup reaches the foreground job, as with a login shell.
			m := termtest.Start(t, 120, 40, "sh -c "+shellQuote(script)+"; sleep 30")
			errOut := func() string { b, _ := os.ReadFile(filepath.Join(dir, "err.txt")); return string(b) }
			if tc.stdout == "" {
				m.WaitForText(15*time.Second, "RUNNING", "OVERSHOOT")
			} else {
				waitUntil(t, 15*time.Second, "a progress line", func() bool { return strings.Contains(errOut(), "[1s/") })
			}
			port := regexp.MustCompile(`redis-server \S+ on (127\.0\.0\.1:\d+)`).FindStringSubmatch(errOut())
			folders, _ := filepath.Glob(filepath.Join(dir, "limitctl-redis-*"))
			if port == nil || len(folders) != 1 {
				t.Fatalf("no throw-away server to watch (target line %v, folders %v)\n%s", port, folders, errOut())
			}
			m.Run("kill-server")
			waitUntil(t, 20*time.Second, "the exit code", func() bool { _, err := os.Stat(filepath.Join(dir, "rc")); return err == nil })
			rc, _ := os.ReadFile(filepath.Join(dir, "rc"))
			if strings.TrimSpace(string(rc)) != "130" {
				t.Errorf("exit %s after SIGHUP, want 130\n%s", rc, errOut())
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "limitctl-redis-*")); len(left) != 0 {
				t.Errorf("the throw-away server's folder is left: %v", left)
			}
			if conn, err := net.DialTimeout("tcp", port[1], time.Second); err == nil {
				conn.Close()
				t.Errorf("the throw-away redis-server on %s still answers", port[1])
			}
			if tc.stdout != "" {
				var sum struct {
					Interrupted bool `json:"interrupted"`
					Strategies  []struct{ Attempts int64 }
				}
				out, _ := os.ReadFile(filepath.Join(dir, "out.json"))
				if err := json.Unmarshal(out, &sum); err != nil || !sum.Interrupted || len(sum.Strategies) == 0 || sum.Strategies[0].Attempts == 0 {
					t.Errorf("no partial summary after SIGHUP: %v %+v\n%s", err, sum, out)
				}
			}
		})
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
