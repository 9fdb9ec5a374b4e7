package redistest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ProcessesIn maps each process running from a folder directly inside dir (its working
// directory, as a redis-server started by embedded runs from its own) to that folder's name.
// It reads /proc: Linux only.
func ProcessesIn(t testing.TB, dir string) map[int]string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]string{}
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		pid, _ := strconv.Atoi(filepath.Base(p))
		if err == nil && filepath.Dir(cwd) == dir && running(pid) {
			found[pid] = filepath.Base(cwd)
		}
	}
	return found
}

// WaitGone waits until none of pids runs (each gone, or a zombie nobody reaped); after limit it
// kills those left, so a failing test leaves nothing either, and fails.
func WaitGone(t testing.TB, limit time.Duration, pids map[int]string) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		var left []string
		for pid, folder := range pids {
			if running(pid) {
				left = append(left, strconv.Itoa(pid)+" in "+folder)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for pid := range pids {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
			t.Fatalf("still running after %s: %s", limit, strings.Join(left, ", "))
		}
	}
}

// running says whether process pid exists and is not a zombie. It reads /proc apart from
// package orphan, so the tests of what orphan does do not judge by orphan's own reading.
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	state := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(state) > 0 && state[0] != "Z" && state[0] != "X"
}
