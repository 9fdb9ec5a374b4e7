package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/limitapp"
)

// One verdict, one exit code (help exit-codes): the limiter under test exact exits 0, anything
// else 3 (OVERSHOOT and the like proven; not judged, no evidence and errors not a pass either),
// whether the verdict is given by hammer --http, by judge reading that run's record, or read off
// either's JUnit report, which fails exactly when its command does.
func TestAVerdictHasOneExitCodeOnEveryPath(t *testing.T) {
	skipInShortMode(t)
	app := limitapp.Start(t, httpConfig)
	generous := limitapp.StartOn(t, app.Redis, limitapp.Config{Limit: 100_000, Window: httpConfig.Window})
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		url   string
		flags []string
		word  string
	}{
		{"exact", app.URL(limitapp.IncrFirst), nil, "exact"},
		{"overshoot", app.URL(limitapp.MemoryCheckThenUpdate), nil, "OVERSHOOT"},
		// Over 300ms of a 1s window, and no loading on, no overshoot could be proven short of the limit.
		{"not judged", app.URL(limitapp.IncrFirst), []string{"--duration", "300ms", "--max-duration", "300ms"}, "not judged"},
		// A limit the load never reaches: nothing was tested.
		{"no evidence", generous.URL(limitapp.IncrFirst), []string{"--limit", "100000"}, "no evidence"},
	} {
		t.Run(c.name, func(t *testing.T) {
			record, hammerJUnit, judgeJUnit := filepath.Join(dir, c.name+".jsonl"), filepath.Join(dir, c.name+".xml"), filepath.Join(dir, c.name+"-judge.xml")
			args := []string{"hammer", "--limiter", "fixed-window", "--limit", strconv.FormatInt(httpConfig.Limit, 10),
				"--duration", "3s", "--http", "app=" + c.url, "--record", record, "--junit", hammerJUnit, "-o", "json"}
			h := run(t, append(args, c.flags...)...)
			word := verdictOf(t, h, "app")
			if word != c.word {
				t.Errorf("the run read %s, built to read %s", word, c.word)
			}
			code := ExitCheckFailed
			if word == "exact" {
				code = 0
			}
			j := run(t, "judge", record, "--junit", judgeJUnit, "-o", "json")
			jword := verdictOf(t, j, "app")
			if h.code != code || j.code != code || jword != word {
				t.Errorf("hammer: %s, exit %d; judge of its record: %s, exit %d; want both exit %d", word, h.code, jword, j.code, code)
			}
			for _, f := range []string{hammerJUnit, judgeJUnit} {
				if failed := junitFailures(t, f) > 0; failed != (code == ExitCheckFailed) {
					t.Errorf("%s: failures %v with exit %d", filepath.Base(f), failed, code)
				}
			}
		})
	}
}

// verdictOf is strategy name's verdict word in a run's JSON.
func verdictOf(t *testing.T, r result, name string) string {
	t.Helper()
	var doc struct {
		Strategies []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("exit %d, not JSON: %v\n%s\n%s", r.code, err, r.out, r.errOut)
	}
	for _, st := range doc.Strategies {
		if st.Name == name {
			return st.Verdict
		}
	}
	t.Fatalf("no strategy %s in %s", name, r.out)
	return ""
}

// junitFailures is the failures attribute of a JUnit file's root.
func junitFailures(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), `failures="`)
	n, _, _ := strings.Cut(rest, `"`)
	failures, err := strconv.Atoi(n)
	if !ok || err != nil {
		t.Fatalf("%s: no failures attribute:\n%s", path, b)
	}
	return failures
}
