package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// A file a flag names is checked before the run without being created; one that cannot be
// written is a usage error that names the flag; no file asked for is no check.
func TestCheckFlag(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "r.html")
	if err := CheckFlag("--report", fresh); err != nil {
		t.Fatalf("a new file in a writable directory: %v", err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the check created %s", fresh)
	}
	err := CheckFlag("--junit", filepath.Join(dir, "no", "such", "dir", "x.xml"))
	var usage *exitcode.UsageError
	if !errors.As(err, &usage) || !strings.HasPrefix(err.Error(), "--junit: ") {
		t.Errorf("a missing directory: %v, want a usage error naming --junit", err)
	}
	if err := CheckFlag("--junit", ""); err != nil {
		t.Errorf("no file asked for: %v", err)
	}
}
