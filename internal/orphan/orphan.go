// Package orphan ties the processes limitctl starts to its own life, and finds what a process
// that is gone left behind: a folder or socket is named for its owner (its pid and, on Linux,
// when it started), so a later run can tell whether that owner still lives.
package orphan

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// tag is this process's "<pid>-<start>-<namespace>": when it started, where the platform says
// (a guard against a reused pid), and its pid namespace (a /tmp shared with a container whose
// pids this process cannot see), each 0 where unknown.
var tag = sync.OnceValue(func() string {
	start, _ := started(os.Getpid())
	return fmt.Sprintf("%d-%s-%s", os.Getpid(), start, namespace())
})

// Name is prefix and this process's tag, ending in "-": the start of the name of a folder or
// socket that only this process may remove while it lives (os.MkdirTemp adds its random part).
func Name(prefix string) string { return prefix + tag() + "-" }

// Sweep hands remove the path of each entry of dir named by Name(prefix) in a process that is
// gone. An entry of a living owner, of another pid namespace, or whose name holds no tag, is left
// alone.
func Sweep(dir, prefix string, remove func(path string)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, "-", 4)
		if len(parts) < 4 || parts[2] != namespace() {
			continue // no tag, or an owner whose pids are not this process's to see
		}
		pid, err := strconv.Atoi(parts[0])
		if err != nil || pid <= 0 {
			continue
		}
		if !alive(pid, parts[1]) {
			remove(filepath.Join(dir, e.Name()))
		}
	}
}
