package cmd

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// junitCounts reads a JUnit file's totals.
func junitCounts(t *testing.T, path string) (doc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Classname string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failures  []struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JUnit report: %v", err)
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("JUnit report: %v\n%s", err, b)
	}
	return doc
}

// lintProject is a checkout with one script that fails lint and one clean, as a CI job sees it.
func lintProject(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir())
	os.MkdirAll("scripts", 0o755)
	os.WriteFile(filepath.Join("scripts", "bad.lua"), []byte("count = redis.call('GET', 'rl:' .. ARGV[1])\nreturn count\n"), 0o644)
	os.WriteFile(filepath.Join("scripts", "clean.lua"), []byte("local n = redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], 1000)\nreturn n\n"), 0o644)
}

func TestLintSARIFOnStdoutDiagnosticsOnStderrExit3(t *testing.T) {
	lintProject(t)
	r := run(t, "lint", "-o", "sarif", "scripts/bad.lua", "scripts/clean.lua").wantExit(t, ExitCheckFailed)
	var log struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(r.out), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("stdout is not one SARIF 2.1.0 run: %v\n%s", err, r.out)
	}
	if len(log.Runs[0].Results) < 2 || log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != "scripts/bad.lua" {
		t.Errorf("results %+v, want bad.lua's, relative to the working directory", log.Runs[0].Results)
	}
	// The job's log still shows what is wrong, where, and the count, without a terminal.
	for _, want := range []string{"scripts/bad.lua:1:1: error: global-write: ", "2 file(s): 2 error(s), 0 warning(s)", "limitctl: lint: 2 error(s)"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
		}
	}
	run(t, "lint", "-o", "sarif", "scripts/clean.lua").wantExit(t, ExitOK)
}

func TestLintGitHubAnnotationsExit3(t *testing.T) {
	lintProject(t)
	r := run(t, "lint", "-o", "github", "scripts/bad.lua", "scripts/clean.lua").wantExit(t, ExitCheckFailed)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "::error file=scripts/bad.lua,line=1,col=1,title=global-write::") {
		t.Errorf("want two ::error lines for bad.lua, got:\n%s", r.out)
	}
	if !strings.Contains(r.errOut, "2 file(s): 2 error(s), 0 warning(s)") {
		t.Errorf("stderr lacks the count:\n%s", r.errOut)
	}
}

func TestLintJUnitBesideAnyOutput(t *testing.T) {
	lintProject(t)
	for _, format := range []string{"", "json", "github", "sarif", "tsv"} {
		args := []string{"lint", "--junit", "lint.xml", "scripts/bad.lua", "scripts/clean.lua"}
		if format != "" {
			args = append(args, "-o", format)
		}
		plain := run(t, append([]string{"lint"}, args[3:]...)...)
		r := run(t, args...).wantExit(t, ExitCheckFailed)
		// The report is an addition: stdout is the format's, stderr what it was, plus one line.
		note := "JUnit report written to lint.xml\n"
		if r.out != plain.out || !strings.Contains(r.errOut, note) || strings.Replace(r.errOut, note, "", 1) != plain.errOut {
			t.Errorf("-o %q with --junit changed the output:\nstdout:\n%s\nstderr:\n%s\nwithout:\n%s", format, r.out, r.errOut, plain.errOut)
		}
		doc := junitCounts(t, "lint.xml")
		if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites[0].Cases[0].Failures) != 2 || doc.Suites[0].Cases[0].Name != "scripts/bad.lua" {
			t.Errorf("-o %q: JUnit %+v, want 2 files, bad.lua failing twice", format, doc)
		}
	}
	run(t, "lint", "--junit", "lint.xml", "scripts/clean.lua").wantExit(t, ExitOK)
	if doc := junitCounts(t, "lint.xml"); doc.Tests != 1 || doc.Failures != 0 {
		t.Errorf("clean run replaced the report with %+v", doc)
	}
	run(t, "lint", "--junit", filepath.Join("no", "such", "dir", "x.xml"), "scripts/clean.lua").wantExit(t, ExitUsage).wantOneLineError(t, "--junit")
}

// sarif and github are lint's: the other commands refuse them as they refuse any unknown format.
func TestCIOutputsAreLintsOnly(t *testing.T) {
	run(t, "hammer", "-o", "sarif").wantExit(t, ExitUsage).wantOneLineError(t, `unknown output "sarif"`, "lint")
	run(t, "scripts", "list", "-o", "github").wantExit(t, ExitUsage).wantOneLineError(t, `unknown output "github"`)
	run(t, "lint", "-o", "xml", "x.lua").wantExit(t, ExitUsage).wantOneLineError(t, "sarif or github")
	// An unwritable --junit stops the hammer before any load, as --report does.
	run(t, "hammer", "--junit", filepath.Join(t.TempDir(), "no", "such", "x.xml")).wantExit(t, ExitUsage).wantOneLineError(t, "--junit")
}

// A real hammer run with --junit and GITHUB_STEP_SUMMARY: exit 3 for the failed assertion as
// without them, stdout the same JSON, stderr the same verdict lines, the report and the summary
// naming the failure, in the verdict lines' words.
func TestHammerJUnitAndStepSummary(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	junit, summary := filepath.Join(dir, "hammer.xml"), filepath.Join(dir, "summary.md")
	os.WriteFile(summary, []byte("earlier step\n"), 0o644)
	r := runEnv(t, map[string]string{"GITHUB_STEP_SUMMARY": summary}, "--addr", srv.Addr, "hammer", "--requests", "3000",
		"--strategies", "naive,lua", "--assert", "lua.overshoot==0", "--assert", "lua.attempts<0", "--junit", junit, "-o", "json").wantExit(t, ExitCheckFailed)
	var doc struct {
		RunID      string `json:"run_id"`
		Strategies []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil || len(doc.Strategies) != 2 {
		t.Fatalf("stdout is not the hammer's JSON: %v\n%s", err, r.out)
	}
	if !strings.Contains(r.errOut, "limitctl: assertion failed: lua.attempts<0") {
		t.Errorf("stderr lacks the human summary:\n%s", r.errOut)
	}
	// The verdict lines' words, as printed on stderr: a strategy's first line (a how-line
	// below the verdicts starts with its name too).
	words := map[string]string{}
	for _, line := range strings.Split(r.errOut, "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[0] == "naive" || f[0] == "lua") && words[f[0]] == "" {
			words[f[0]] = f[1]
		}
	}
	if len(words) != 2 {
		t.Fatalf("no verdict lines on stderr:\n%s", r.errOut)
	}

	report := junitCounts(t, junit)
	if report.Tests != 4 || report.Failures != 1 || report.Errors != 0 {
		t.Errorf("JUnit %d tests, %d failures, %d errors; want 4 (2 assertions, 2 verdicts), 1 failure", report.Tests, report.Failures, report.Errors)
	}
	for _, c := range report.Suites[0].Cases {
		failed := len(c.Failures) > 0
		if failed != (c.Name == "lua.attempts<0") {
			t.Errorf("case %s %s failed=%v", c.Classname, c.Name, failed)
		}
		if c.Classname == "hammer.verdict" && !strings.HasPrefix(c.SystemOut, c.Name+"  "+words[c.Name]) {
			t.Errorf("verdict case %s says %q, stderr says %q", c.Name, c.SystemOut, words[c.Name])
		}
	}

	md, _ := os.ReadFile(summary)
	for _, want := range []string{"earlier step\n### limitctl hammer: FAILED\n", "run id `" + doc.RunID + "`",
		"| naive | **" + words["naive"] + "** |", "| lua | **" + words["lua"] + "** |", "| `lua.attempts<0` | **FAIL** |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}

	// Without GITHUB_STEP_SUMMARY nothing is written anywhere.
	t.Chdir(dir)
	before, _ := os.ReadDir(dir)
	runEnv(t, nil, "--addr", srv.Addr, "hammer", "--requests", "500", "--strategies", "lua", "-o", "json").wantExit(t, ExitOK)
	after, _ := os.ReadDir(dir)
	if md2, _ := os.ReadFile(summary); string(md2) != string(md) || len(after) != len(before) {
		t.Errorf("a run without GITHUB_STEP_SUMMARY wrote a file (%d -> %d entries) or the summary", len(before), len(after))
	}
}

// A hammer that cannot reach its server exits 1 as before, and its report says why.
func TestHammerJUnitOfARunThatCannotStart(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "hammer.xml")
	r := run(t, "--addr", "127.0.0.1:1", "--timeout", "500ms", "hammer", "--requests", "10", "--junit", junit).wantExit(t, ExitError)
	report := junitCounts(t, junit)
	if report.Tests != 1 || report.Errors != 1 {
		t.Errorf("JUnit %+v, want one case in error", report)
	}
	if !strings.Contains(r.errOut, "limitctl: ") {
		t.Errorf("stderr lacks the error line:\n%s", r.errOut)
	}
}

// A --script that fails lint stops the hammer before any load with exit 4: a failure in the
// report, as every failed check is.
func TestHammerJUnitOfAScriptThatFailsLint(t *testing.T) {
	dir := t.TempDir()
	script, junit := filepath.Join(dir, "bad.lua"), filepath.Join(dir, "hammer.xml")
	os.WriteFile(script, []byte("count = redis.call('ZCARD', KEYS[1])\nreturn {1, count}\n"), 0o644)
	run(t, "hammer", "--script", script, "--requests", "10", "--junit", junit).wantExit(t, ExitLintRefused)
	if report := junitCounts(t, junit); report.Tests != 1 || report.Failures != 1 || report.Errors != 0 {
		t.Errorf("JUnit %+v, want one failed case", report)
	}
}

// Two processes share a run; hammer report --junit over it writes the report hammer writes, of
// the merged run: naive overshot across them and lua held, so an assertion that naive held fails
// its case and exits 3, as the report without --junit does, and the one that it overshot passes.
func TestHammerReportJUnitAndStepSummary(t *testing.T) {
	srv := redistest.Start(t)
	var wg sync.WaitGroup
	processes := make([]result, 2)
	for i := range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			processes[i] = execBinary(t, nil, "--addr", srv.Addr, "hammer", "--run-id", "ci2", "--witness", "redis", "--keep-keys",
				"--strategies", "naive,lua", "--limit", "4", "--workers", "8", "--hold", "5ms", "--requests", "800", "-o", "json")
		}()
	}
	wg.Wait()
	for _, p := range processes {
		p.wantExit(t, ExitOK)
	}
	report := []string{"--addr", srv.Addr, "hammer", "report", "--run-id", "ci2", "-o", "json", "--assert", "lua.overshoot==0"}
	without := run(t, append(report, "--assert", "naive.overshoot==0")...).wantExit(t, ExitCheckFailed)

	dir := t.TempDir()
	junit, summary := filepath.Join(dir, "report.xml"), filepath.Join(dir, "summary.md")
	r := runEnv(t, map[string]string{"GITHUB_STEP_SUMMARY": summary}, append(report, "--assert", "naive.overshoot==0", "--junit", junit)...).wantExit(t, ExitCheckFailed)
	if r.out != without.out {
		t.Errorf("--junit changed stdout:\n%s\nwithout it:\n%s", r.out, without.out)
	}
	doc := junitCounts(t, junit)
	if doc.Tests != 4 || doc.Failures != 1 || doc.Errors != 0 || doc.Suites[0].Name != "limitctl hammer report" {
		t.Fatalf("JUnit %+v; want suite limitctl hammer report, 4 tests (2 assertions, 2 verdicts), 1 failure", doc)
	}
	for _, c := range doc.Suites[0].Cases {
		if failed := len(c.Failures) > 0; failed != (c.Name == "naive.overshoot==0") {
			t.Errorf("case %s %s failed=%v: only naive.overshoot==0 fails", c.Classname, c.Name, failed)
		}
	}
	md, _ := os.ReadFile(summary)
	for _, want := range []string{"### limitctl hammer report: FAILED\n", "16 workers per strategy across 2 processes", "| naive | **OVERSHOOT** |",
		"| `naive.overshoot==0` | **FAIL** |", "| `lua.overshoot==0` | PASS | 0 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("step summary lacks %q:\n%s", want, md)
		}
	}

	run(t, append(report, "--assert", "naive.overshoot>0", "--junit", junit)...).wantExit(t, ExitOK)
	if doc := junitCounts(t, junit); doc.Tests != 4 || doc.Failures+doc.Errors != 0 {
		t.Errorf("a passing report: JUnit %+v, want 4 passing cases", doc)
	}
	// A run no process shared is exit 1 as before, an error in the report.
	run(t, "--addr", srv.Addr, "hammer", "report", "--run-id", "nobody", "--junit", junit).wantExit(t, ExitError)
	if doc := junitCounts(t, junit); doc.Tests != 1 || doc.Errors != 1 {
		t.Errorf("a report of no run: JUnit %+v, want one case in error", doc)
	}
}
