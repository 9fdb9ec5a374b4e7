package ciformat

import (
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/lint"
)

func TestGitHubAnnotationsAreOneWorkflowCommandPerDiagnostic(t *testing.T) {
	wd := "/work/repo"
	diags := []lint.Diagnostic{
		{File: "scripts/acquire.lua", Line: 3, Col: 5, Severity: "error", Rule: "global-write", Message: `assignment to global "total"`},
		{File: "/work/repo/lib/queue.lua", Line: 9, Col: 1, Severity: "warning", Rule: "missing-expire", Message: "KEYS[1] never expires"},
		{File: "/elsewhere/x.lua", Line: 1, Col: 2, Severity: "error", Rule: "syntax", Message: "near ="},
	}
	got := strings.Split(strings.TrimSuffix(string(GitHubAnnotations(wd, diags)), "\n"), "\n")
	want := []string{
		`::error file=scripts/acquire.lua,line=3,col=5,title=global-write::assignment to global "total"`,
		// An absolute path inside the checkout is made relative: annotations resolve against it.
		`::warning file=lib/queue.lua,line=9,col=1,title=missing-expire::KEYS[1] never expires`,
		// Outside the checkout the path stays absolute.
		`::error file=/elsewhere/x.lua,line=1,col=2,title=syntax::near =`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The runner splits a command at :: and its properties at , and =, and unescapes %25 %0D %0A
// %3A %2C: a value holding any of them must arrive whole, and the message keeps its : and ,.
func TestGitHubAnnotationsEscapeAsTheRunnerUnescapes(t *testing.T) {
	d := lint.Diagnostic{File: "we,ird:name%.lua", Line: 1, Col: 1, Severity: "error", Rule: "undeclared-key",
		Message: "key 'a:b', 100% wrong\r\nsecond line"}
	got := strings.TrimSuffix(string(GitHubAnnotations("/w", []lint.Diagnostic{d})), "\n")
	want := "::error file=we%2Cird%3Aname%25.lua,line=1,col=1,title=undeclared-key::key 'a:b', 100%25 wrong%0D%0Asecond line"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if strings.Count(got, "\n") != 0 {
		t.Errorf("a diagnostic became more than one line: %q", got)
	}
	// Unescaping as the runner does gives back every value.
	cmd, message, _ := strings.Cut(strings.TrimPrefix(got, "::"), "::")
	if unescape(message) != d.Message {
		t.Errorf("message unescapes to %q, want %q", unescape(message), d.Message)
	}
	_, props, _ := strings.Cut(cmd, " ")
	for _, kv := range strings.Split(props, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "file" && unescape(v) != d.File {
			t.Errorf("file unescapes to %q, want %q", unescape(v), d.File)
		}
	}
}

// unescape is the runner's side (the actions runner's ActionCommand unescaping).
func unescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

func TestGitHubAnnotationsOfACleanRunAreEmpty(t *testing.T) {
	if got := GitHubAnnotations("/w", nil); len(got) != 0 {
		t.Errorf("clean run wrote %q", got)
	}
}
