package orphan

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// gonePid is the pid of a process that ran and was reaped.
func gonePid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepRemovesWhatGoneOwnersLeftAndNothingOfTheLiving(t *testing.T) {
	dir := t.TempDir()
	gone := gonePid(t)
	ns := namespace()
	names := map[string]bool{ // name: swept
		Name("limitctl-redis-") + "1":                             false, // this process's
		fmt.Sprintf("limitctl-redis-%d-0-%s-1", gone, ns):         true,
		fmt.Sprintf("limitctl-redis-%d-999999999-%s-1", gone, ns): true,  // its start time recorded
		fmt.Sprintf("limitctl-redis-%d-0-%s-1", os.Getppid(), ns): false, // a living process, start unknown
		fmt.Sprintf("limitctl-redis-%d-0-1%s-1", gone, ns):        false, // another pid namespace
		"limitctl-redis-123456789":                                false, // no owner in the name
		fmt.Sprintf("other-%d-0-%s-1", gone, ns):                  false, // another prefix
		fmt.Sprintf("limitctl-redis-%d-0-x", gone):                false, // no tag
	}
	if runtime.GOOS == "linux" {
		// This pid with another start time: a reused pid, its first owner gone.
		names[fmt.Sprintf("limitctl-redis-%d-1-%s-1", os.Getpid(), ns)] = true
	}
	for name := range names {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var removed []string
	Sweep(dir, "limitctl-redis-", func(path string) { removed = append(removed, filepath.Base(path)) })
	for name, swept := range names {
		if slices.Contains(removed, name) != swept {
			t.Errorf("%s: swept %v, want %v", name, !swept, swept)
		}
	}
}

func TestSweepTakesAZombieOwnerForGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("zombies are told apart through /proc")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start, _ := started(cmd.Process.Pid)
	cmd.Process.Kill()
	defer cmd.Wait()
	for {
		if _, running := started(cmd.Process.Pid); !running {
			break // a zombie until Wait reaps it
		}
		time.Sleep(time.Millisecond)
	}
	dir := t.TempDir()
	name := fmt.Sprintf("p-%d-%s-%s-1", cmd.Process.Pid, start, namespace())
	os.Mkdir(filepath.Join(dir, name), 0o700)
	var removed []string
	Sweep(dir, "p-", func(path string) { removed = append(removed, filepath.Base(path)) })
	if !slices.Equal(removed, []string{name}) {
		t.Errorf("swept %v, want the zombie's %s", removed, name)
	}
}
