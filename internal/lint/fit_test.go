package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A diagnostic line fits LineWidth for a script of an ordinary path: the message's first
// clause, or the rule's few words, while Message keeps the whole explanation (JSON, --explain).
// Every fixture's findings are tried as if the script were limiter/acquire.lua.
func TestDiagnosticLinesFitAHundredColumns(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/lint/*.lua")
	shortened := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range Lint("limiter/acquire.lua", src) {
			line := d.Fit(LineWidth)
			if n := utf8.RuneCountInString(line); n > LineWidth {
				t.Errorf("%s: a line of %d columns:\n%s", file, n, line)
			}
			if !strings.HasPrefix(line, strings.TrimSuffix(d.String(), d.Message)) {
				t.Errorf("%s: the line lost its file:line:col: severity: rule: head:\n%s", file, line)
			}
			if line != d.String() {
				shortened++
				if brief := firstClause(d.Message); !strings.HasSuffix(line, brief) && !strings.HasSuffix(line, ": "+shortOf(t, d.Rule)) {
					t.Errorf("%s: shortened to neither the first clause nor the rule's words:\n%s", file, line)
				}
			}
		}
	}
	if shortened == 0 {
		t.Fatal("no line needed shortening: the test proves nothing")
	}
	// A message that fits is printed whole.
	d := Diagnostic{File: "a.lua", Line: 3, Col: 7, Severity: SeverityError, Rule: RuleGlobalWrite, Message: "declare it local"}
	if d.Fit(LineWidth) != d.String() {
		t.Errorf("a short line was changed: %q", d.Fit(LineWidth))
	}
}

func shortOf(t *testing.T, rule string) string {
	t.Helper()
	for _, r := range Rules() {
		if r.Name == rule {
			if r.Short == "" {
				t.Errorf("rule %s has no Short", rule)
			}
			return r.Short
		}
	}
	t.Fatalf("unknown rule %s", rule)
	return ""
}

func TestFirstClauseSkipsBracketsAndQuotes(t *testing.T) {
	for in, want := range map[string]string{
		"TIME reads the clock; pass it in ARGV":                      "TIME reads the clock",
		"DEL key x (redis.call('GET', KEYS[1])) comes: from a reply": "DEL key x (redis.call('GET', KEYS[1])) comes",
		"no clause here":                  "no clause here",
		"a 'quoted; part' then; the rest": "a 'quoted; part' then",
	} {
		if got := firstClause(in); got != want {
			t.Errorf("firstClause(%q) = %q, want %q", in, got, want)
		}
	}
}
