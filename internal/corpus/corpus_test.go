package corpus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/limitctl/limitctl/internal/lint"
)

// Every generated script passes the linter without an error (a user's correct script would), and
// the corpus covers every family on every clock it runs on.
func TestCorpusScriptsLintCleanAndCoverEveryFamily(t *testing.T) {
	all := Correct(1)
	dir := t.TempDir()
	seen := map[string]int{}
	for _, l := range all {
		seen[string(l.Kind)+"/"+l.Family]++
		path := filepath.Join(dir, "s.lua")
		if err := os.WriteFile(path, []byte(l.Source), 0o644); err != nil {
			t.Fatal(err)
		}
		if report, block := lint.Gate(lint.Lint(path, []byte(l.Source))); block {
			t.Errorf("%s: lint refuses it: %v\n%s", l.Name, report, l.Source)
		}
	}
	for _, f := range families {
		if seen[string(f.kind)+"/"+f.name] == 0 {
			t.Errorf("no limiter of %s/%s", f.kind, f.name)
		}
	}
	t.Logf("%d limiters", len(all))
}
