package ciformat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The JUnit file is replaced and the step summary appended to, as each job step appends its
// own section; a file that cannot be written is named in the error and the other is still
// written; a file not named is not written.
func TestFilesWriteEachNamedFile(t *testing.T) {
	dir := t.TempDir()
	files := Files{JUnit: filepath.Join(dir, "r.xml"), StepSummary: filepath.Join(dir, "summary.md")}
	for _, run := range []string{"first", "second"} {
		wrote, err := files.Write([]byte("<"+run+"/>"), []byte(run+"\n"), nil)
		if err != nil || !wrote {
			t.Fatalf("Write: %v, %v", wrote, err)
		}
	}
	if b, _ := os.ReadFile(files.JUnit); string(b) != "<second/>" {
		t.Errorf("JUnit file %q, want the last report alone", b)
	}
	if b, _ := os.ReadFile(files.StepSummary); string(b) != "first\nsecond\n" {
		t.Errorf("step summary %q, want both sections", b)
	}

	broken := Files{JUnit: filepath.Join(dir, "missing", "r.xml"), StepSummary: files.StepSummary}
	wrote, err := broken.Write([]byte("<x/>"), []byte("third\n"), nil)
	if wrote || err == nil || !strings.Contains(err.Error(), "--junit "+broken.JUnit) {
		t.Errorf("unwritable JUnit: wrote %v, %v; want an error naming the file", wrote, err)
	}
	if b, _ := os.ReadFile(files.StepSummary); !strings.HasSuffix(string(b), "third\n") {
		t.Errorf("the step summary was not appended beside a failed JUnit file: %q", b)
	}
	if wrote, err := files.Write(nil, nil, errors.New("no report")); wrote || err == nil || !strings.Contains(err.Error(), "no report") {
		t.Errorf("a report that could not be built: wrote %v, %v", wrote, err)
	}
	if wrote, err := (Files{}).Write([]byte("x"), []byte("y"), nil); wrote || err != nil {
		t.Errorf("no files named: wrote %v, %v", wrote, err)
	}
}
