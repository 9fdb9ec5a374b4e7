//go:build !linux

package orphan

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// BindToParent does nothing here: only Linux kills a child with its parent. A later run stops
// what a dead one left (embedded.Start).
func BindToParent(cmd *exec.Cmd) {}

// started is unknown here: a process is told by its pid alone.
func started(pid int) (string, bool) { return "0", true }

// namespace is unknown here: every process shares one.
func namespace() string { return "0" }

// alive says whether process pid still runs (a reused pid reads as alive, which keeps what it
// names).
func alive(pid int, start string) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false // Windows: no such process
	}
	defer p.Release()
	return !errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
