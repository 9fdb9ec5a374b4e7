package orphan

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// BindToParent has the kernel kill cmd's process (SIGKILL) when this one dies, however it dies.
// The signal follows the OS thread that forked it, and Go ends a thread only when a goroutine
// locked to it (runtime.LockOSThread) returns, which nothing in limitctl does. The parent dying
// between fork and exec is covered too: Go's child checks getppid after setting the signal.
func BindToParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// started is when process pid started, in clock ticks since boot (/proc/PID/stat's 22nd
// field), and false when it cannot be read or the process is a zombie.
func started(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "0", false
	}
	// The command name (field 2) is in parentheses and may hold anything: count from its end.
	stat := string(b)
	fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return "0", false
	}
	return fields[19], true
}

// namespace is the inode number of this process's pid namespace, or 0 when it cannot be read.
var namespace = sync.OnceValue(func() string {
	link, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	inode := strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
	if _, convErr := strconv.ParseUint(inode, 10, 64); err != nil || convErr != nil {
		return "0"
	}
	return inode
})

// alive says whether process pid, which started at start, still runs: not when it is gone, a
// zombie, or a newer process under a reused pid. Without /proc it trusts kill(pid, 0).
func alive(pid int, start string) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true
	}
	now, ok := started(pid)
	return ok && (start == "0" || now == start)
}
