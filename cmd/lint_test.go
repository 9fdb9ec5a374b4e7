package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLintReportsDiagnosticsAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := write("clean.lua", "local n = redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], 1000)\nreturn n\n")
	warn := write("warn.lua", "local t = redis.call('TIME')\nreturn redis.call('GET', KEYS[1])\n")
	bad := write("bad.lua", "count = redis.call('GET', 'rl:' .. ARGV[1])\nreturn count\n")

	run(t, "lint", clean).wantExit(t, ExitOK)

	w := run(t, "lint", warn).wantExit(t, ExitOK)
	if !strings.Contains(w.out, warn+":1:") || !strings.Contains(w.out, ": warning: nondeterministic: ") {
		t.Errorf("want a file:line:col: warning: nondeterministic line, got:\n%s", w.out)
	}
	run(t, "lint", "--strict", warn).wantExit(t, ExitCheckFailed).wantOneLineError(t, "--strict")

	b := run(t, "lint", clean, bad, "-o", "json").wantExit(t, ExitCheckFailed)
	var got struct {
		SchemaVersion int `json:"schema_version"`
		Diagnostics   []struct {
			File, Severity, Rule, Message string
			Line, Col                     int
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(b.out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.out)
	}
	rules := map[string]bool{}
	for _, d := range got.Diagnostics {
		if d.File != bad {
			t.Errorf("diagnostic for %s, want only %s", d.File, bad)
		}
		rules[d.Rule] = true
	}
	if !rules["global-write"] || !rules["undeclared-key"] {
		t.Errorf("want global-write and undeclared-key, got %+v", got.Diagnostics)
	}

	tsv := run(t, "lint", bad, "-o", "tsv").wantExit(t, ExitCheckFailed)
	if !strings.HasPrefix(tsv.out, "file\tline\tcol\tseverity\trule\tmessage\n") {
		t.Errorf("tsv header missing:\n%s", tsv.out)
	}
}

func TestLintReadsStandardInput(t *testing.T) {
	streams, in, out, _ := TestStreams()
	in.WriteString("x = 1\n")
	code := Execute(t.Context(), Build{}, []string{"lint", "-"}, streams)
	if code != ExitCheckFailed || !strings.HasPrefix(out.String(), "<stdin>:1:1: error: global-write: ") {
		t.Fatalf("exit %d, out %q", code, out.String())
	}
}

func TestLintBadInput(t *testing.T) {
	run(t, "lint").wantExit(t, ExitUsage).wantOneLineError(t, "FILE.lua")
	run(t, "lint", "/nonexistent/x.lua").wantExit(t, ExitUsage).wantOneLineError(t, "cannot read script", "/nonexistent/x.lua")
	bin := filepath.Join(t.TempDir(), "x.lua")
	os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 1}, 0o644)
	run(t, "lint", bin).wantExit(t, ExitUsage).wantOneLineError(t, "binary data")
}

func TestLintRulesOnAndOffForAProject(t *testing.T) {
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	dir := filepath.Join(repo, "queue")
	os.Mkdir(dir, 0o755)
	// A queue keeps its data on purpose: the push never gives the list a TTL.
	push := filepath.Join(dir, "push.lua")
	os.WriteFile(push, []byte("return redis.call('RPUSH', KEYS[1], ARGV[1])\n"), 0o644)

	r := run(t, "lint", push).wantExit(t, ExitOK)
	if !strings.Contains(r.out, "missing-expire") {
		t.Fatalf("without a project file missing-expire reports:\n%s", r.out)
	}
	if r := run(t, "lint", "--disable", "missing-expire", push).wantExit(t, ExitOK); r.out != "" {
		t.Errorf("--disable missing-expire: got\n%s", r.out)
	}

	os.WriteFile(filepath.Join(repo, ".limitctl.yaml"), []byte("lint:\n  disable: [missing-expire]\n"), 0o644)
	if r := run(t, "lint", push).wantExit(t, ExitOK); r.out != "" {
		t.Errorf("the project file turns missing-expire off, got\n%s", r.out)
	}
	if r := run(t, "lint", "--enable", "missing-expire", push).wantExit(t, ExitOK); !strings.Contains(r.out, "missing-expire") {
		t.Errorf("--enable overrides the project file, got\n%s", r.out)
	}

	run(t, "lint", "--disable", "missing-ttl", push).wantExit(t, ExitUsage).wantOneLineError(t, `unknown rule "missing-ttl"`, "missing-expire")
	run(t, "lint", "--disable", "syntax", push).wantExit(t, ExitUsage).wantOneLineError(t, "syntax cannot be disabled")
	os.WriteFile(filepath.Join(repo, ".limitctl.yaml"), []byte("lint:\n  disabled: [missing-expire]\n"), 0o644)
	run(t, "lint", push).wantExit(t, ExitUsage).wantOneLineError(t, ".limitctl.yaml", "disabled")
}

func TestLintASyntaxErrorCannotBeHidden(t *testing.T) {
	p := filepath.Join(t.TempDir(), "broken.lua")
	os.WriteFile(p, []byte("-- limitctl:ignore syntax\nlocal x = = 1\n"), 0o644)
	r := run(t, "lint", p).wantExit(t, ExitCheckFailed)
	if !strings.Contains(r.out, ":2:11: error: syntax: ") {
		t.Errorf("want the syntax error despite the comment, got\n%s", r.out)
	}
}

// The corpus's project: a queue that turns missing-expire off in its .limitctl.yaml still gets
// its real defect reported.
func TestLintCorpusProjectFile(t *testing.T) {
	script := filepath.Join("..", "testdata", "lint", "project", "queue-push.lua")
	r := run(t, "lint", script).wantExit(t, ExitCheckFailed)
	if strings.Contains(r.out, "missing-expire") || !strings.Contains(r.out, ":8:4: error: reply-type: ") {
		t.Errorf("want only the reply-type error, got\n%s", r.out)
	}
	if r := run(t, "lint", "--enable", "missing-expire", script).wantExit(t, ExitCheckFailed); strings.Count(r.out, ": warning: missing-expire: ") != 4 {
		t.Errorf("--enable missing-expire: want 4 keys reported, got\n%s", r.out)
	}
}

// A diagnostic line fits 100 columns; --explain prints each finding's whole explanation under
// its line, and -o json carries it as the message.
func TestLintLinesFitAndExplainSaysWhy(t *testing.T) {
	t.Chdir(t.TempDir())
	script := "acquire.lua"
	os.WriteFile(script, []byte("local n = redis.call('INCR', KEYS[1])\nreturn n\n"), 0o644)
	plain := run(t, "lint", script).wantExit(t, ExitOK)
	line := strings.TrimSpace(plain.out)
	if len([]rune(line)) > 100 || !strings.Contains(line, ": warning: missing-expire: ") || strings.Contains(line, "\n") {
		t.Fatalf("want one warning line within 100 columns:\n%s", plain.out)
	}
	explained := run(t, "lint", "--explain", script).wantExit(t, ExitOK)
	lines := strings.Split(strings.TrimSpace(explained.out), "\n")
	if lines[0] != line || len(lines) < 2 || !strings.HasPrefix(lines[1], "    ") || !strings.Contains(strings.Join(strings.Fields(explained.out), " "), "abandoned key lives forever") {
		t.Errorf("--explain: want the line, then the explanation indented:\n%s", explained.out)
	}
	for _, l := range lines {
		if len([]rune(l)) > 100 {
			t.Errorf("an explanation line of %d columns: %s", len([]rune(l)), l)
		}
	}
	if j := run(t, "lint", "-o", "json", script).out; !strings.Contains(j, "abandoned key lives forever") {
		t.Errorf("the JSON message lacks the explanation:\n%s", j)
	}
}
