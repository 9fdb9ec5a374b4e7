// Package loadtools finds, for tests, the load tools they run for real: vegeta, installed into
// GOBIN by `make load-tools` (which `make test` runs first).
package loadtools

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Vegeta is the path of the vegeta binary: the one `make load-tools` pinned in GOBIN (GOPATH/bin
// when unset), else one on PATH. A test that needs it fails when it is missing, since `make
// load-tools` can always install it.
func Vegeta(t testing.TB) string {
	t.Helper()
	return find(t, "vegeta")
}

func find(t testing.TB, name string) string {
	t.Helper()
	var dirs []string
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(string(out), "\n") // GOBIN's line is empty when it is unset
		if gobin := strings.TrimSpace(lines[0]); gobin != "" {
			dirs = append(dirs, gobin)
		}
		if len(lines) > 1 {
			for _, gopath := range filepath.SplitList(strings.TrimSpace(lines[1])) {
				dirs = append(dirs, filepath.Join(gopath, "bin"))
			}
		}
	}
	for _, dir := range dirs {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Fatalf("%s is not installed: run `make load-tools` (make test runs it)", name)
	return ""
}
