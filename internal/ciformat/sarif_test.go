package ciformat

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/lint"
)

// lintRunOf lints sources (name -> Lua) in the given order, as the command does.
func lintRunOf(t *testing.T, wd string, files ...[2]string) LintRun {
	t.Helper()
	r := LintRun{WorkDir: wd, Version: "v1.2.3"}
	for _, f := range files {
		r.Files = append(r.Files, LintedFile{Name: f[0], Source: []byte(f[1])})
		r.Diagnostics = append(r.Diagnostics, lint.Lint(f[0], []byte(f[1]))...)
	}
	return r
}

const (
	globalWriteLua = "local n = redis.call('INCR', KEYS[1])\ntotal = n\nredis.call('PEXPIRE', KEYS[1], 1000)\nreturn n\n"
	// A non-ASCII string before the key on the same line: lint's column counts bytes.
	unicodeLua = "local k = 'é' redis.call('GET', ARGV[1])\nreturn 1\n"
	cleanLua   = "local n = redis.call('INCR', KEYS[1])\nredis.call('PEXPIRE', KEYS[1], 1000)\nreturn n\n"
)

// What GitHub code scanning's upload needs of a result (the field notes): the tool's name, each
// result's ruleId, message text, an artifact URI relative to the repository and a start line.
func TestLintSARIFCarriesWhatCodeScanningNeeds(t *testing.T) {
	wd := t.TempDir()
	r := lintRunOf(t, wd,
		[2]string{"scripts/bad.lua", globalWriteLua},
		[2]string{filepath.Join(wd, "lib", "odd name.lua"), unicodeLua},
		[2]string{"clean.lua", cleanLua})
	b, err := LintSARIF(r)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Schema  string `json:"$schema"`
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name, Version string
					Rules         []struct {
						ID                   string
						FullDescription      struct{ Text string }
						Help                 struct{ Text, Markdown string }
						DefaultConfiguration struct{ Level string }
					}
				}
			}
			OriginalURIBaseIDs map[string]struct{ URI string } `json:"originalUriBaseIds"`
			ColumnKind         string
			Results            []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           struct{ StartLine, StartColumn int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	if log.Version != "2.1.0" || log.Schema == "" || len(log.Runs) != 1 {
		t.Fatalf("version %q ($schema %q) with %d runs, want 2.1.0 with one run", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	if run.Tool.Driver.Name != "limitctl" || run.Tool.Driver.Version != "1.2.3" {
		t.Errorf("driver %q %q, want limitctl 1.2.3", run.Tool.Driver.Name, run.Tool.Driver.Version)
	}
	rules := lint.Rules()
	if len(run.Tool.Driver.Rules) != len(rules) {
		t.Fatalf("%d rules, want one per lint rule (%d)", len(run.Tool.Driver.Rules), len(rules))
	}
	for i, rule := range run.Tool.Driver.Rules {
		if rule.ID != rules[i].Name || rule.DefaultConfiguration.Level != rules[i].Severity ||
			!strings.Contains(rule.Help.Text, rules[i].Description[1:]) || rule.Help.Markdown == "" {
			t.Errorf("rule %d: %+v, want %s (%s) with its description as help", i, rule, rules[i].Name, rules[i].Severity)
		}
	}
	if len(run.Results) != len(r.Diagnostics) || len(run.Results) != 2 {
		t.Fatalf("%d results for %d diagnostics (want 2): %+v", len(run.Results), len(r.Diagnostics), r.Diagnostics)
	}
	for i, res := range run.Results {
		d := r.Diagnostics[i]
		if res.RuleID != d.Rule || run.Tool.Driver.Rules[res.RuleIndex].ID != d.Rule || res.Level != d.Severity || res.Message.Text != d.Message || len(res.Locations) != 1 {
			t.Errorf("result %d: %+v, want %+v", i, res, d)
		}
		loc := res.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URIBaseID != "%SRCROOT%" || loc.Region.StartLine != d.Line {
			t.Errorf("result %d location %+v, want %%SRCROOT%%-relative at line %d", i, loc, d.Line)
		}
	}
	// Relative to the working directory, whatever way the file was named; a space escaped.
	if got := run.Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI; got != "scripts/bad.lua" {
		t.Errorf("uri %q, want scripts/bad.lua", got)
	}
	if got := run.Results[1].Locations[0].PhysicalLocation.ArtifactLocation.URI; got != "lib/odd%20name.lua" {
		t.Errorf("uri %q, want lib/odd%%20name.lua", got)
	}
	if base := run.OriginalURIBaseIDs["%SRCROOT%"].URI; base != "file://"+filepath.ToSlash(wd)+"/" {
		t.Errorf("%%SRCROOT%% is %q, want the working directory %s/", base, wd)
	}
	// lint says byte 34 (é is two bytes); SARIF's column counts code points.
	if d, got := r.Diagnostics[1], run.Results[1].Locations[0].PhysicalLocation.Region.StartColumn; d.Col != 34 || got != 33 || run.ColumnKind != "unicodeCodePoints" {
		t.Errorf("byte column %d became %d (%s), want 34 -> 33 unicodeCodePoints", d.Col, got, run.ColumnKind)
	}
}

func TestLintSARIFOfACleanRunHasAnEmptyResultList(t *testing.T) {
	b, err := LintSARIF(lintRunOf(t, t.TempDir(), [2]string{"clean.lua", cleanLua}))
	if err != nil {
		t.Fatal(err)
	}
	// An empty list, not a missing one: code scanning closes the alerts a fix removed.
	if !strings.Contains(string(b), `"results": []`) {
		t.Errorf("clean run's SARIF has no empty results list:\n%s", b)
	}
}

// Microsoft's SARIF multitool validates the log against the SARIF 2.1.0 schema, its rules and
// GitHub code scanning's ingestion rules (GH1001...): no error and no warning. It runs on the lint fixtures (every rule, syntax errors, libraries),
// a file outside the working directory, standard input, and a clean run.
func TestLintSARIFPassesMicrosoftsSARIFMultitool(t *testing.T) {
	tool := sarifMultitool(t)
	root := repoRoot(t)
	fixtures, _ := filepath.Glob(filepath.Join(root, "testdata", "lint", "*.lua"))
	if len(fixtures) < 20 {
		t.Fatalf("found %d lint fixtures", len(fixtures))
	}
	full := LintRun{WorkDir: root, Version: "dev", Strict: true}
	for _, f := range fixtures {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		full.Files = append(full.Files, LintedFile{Name: rel, Source: src})
		full.Diagnostics = append(full.Diagnostics, lint.Lint(rel, src)...)
	}
	logs := map[string]LintRun{
		"fixtures":       full,
		"outside-wd":     lintRunOf(t, t.TempDir(), [2]string{filepath.Join(root, "testdata", "lint", "syntax.lua"), "x ="}),
		"stdin":          lintRunOf(t, root, [2]string{StdinName, globalWriteLua}),
		"clean":          lintRunOf(t, root, [2]string{"clean.lua", cleanLua}),
		"unicode-column": lintRunOf(t, root, [2]string{"u.lua", unicodeLua}),
	}
	dir := t.TempDir()
	for name, r := range logs {
		b, err := LintSARIF(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".sarif")
		os.WriteFile(path, b, 0o644)
		for _, finding := range validateSARIF(t, tool, path) {
			t.Errorf("%s: %s", name, finding)
		}
	}
}

// validateSARIF runs `Sarif.Multitool validate` on path and returns its errors and warnings (its
// notes are suggestions: snippets, message ids). The multitool exits 0 either way, so its own
// SARIF output is read. Its check that every URI answers an HTTP GET is off: the tests reach no
// network but the package registries.
func validateSARIF(t *testing.T, tool, path string) []string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "validate.xml")
	os.WriteFile(config, []byte(`<?xml version="1.0" encoding="utf-8"?>
<Properties>
  <Properties Key="SARIF2006.UrisShouldBeReachable.Options">
    <Property Key="RuleEnabled" Value="Disabled" Type="Driver.RuleEnabledState" />
  </Properties>
</Properties>
`), 0o644)
	out := path + ".validation.sarif"
	// GitHub's own ingestion rules (Gh) besides the SARIF ones. A list option takes every word up
	// to the next option, so none comes last.
	cmd := exec.Command(tool, "validate", "--rule-kind", "Gh;Sarif", "--log", "ForceOverwrite", "--config", config, "--output", out, path)
	cmd.Env = append(os.Environ(), "DOTNET_CLI_TELEMETRY_OPTOUT=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("Sarif.Multitool validate %s: %v\n%s", path, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string
				Level   string
				Message struct{ Text string }
			}
			Invocations []struct{ ExecutionSuccessful bool }
		}
	}
	if err := json.Unmarshal(b, &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Invocations) != 1 {
		t.Fatalf("multitool's output %s: %v\n%s", out, err, b)
	}
	if !log.Runs[0].Invocations[0].ExecutionSuccessful {
		t.Fatalf("the multitool did not run to the end on %s:\n%s", path, b)
	}
	var findings []string
	for _, r := range log.Runs[0].Results {
		if r.Level == "" || r.Level == "error" || r.Level == "warning" { // SARIF's default level is warning
			findings = append(findings, r.Level+" "+r.RuleID+": "+r.Message.Text)
		}
	}
	return findings
}

// A broken log fails validation, so a pass above means something: one the schema refuses (a
// result without a message), and one only GitHub's rules refuse (a result with no location).
func TestTheMultitoolCatchesABrokenLog(t *testing.T) {
	tool := sarifMultitool(t)
	for name, log := range map[string]string{
		"no-message":  `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"limitctl"}},"results":[{"ruleId":"syntax","locations":[]}]}]}`,
		"no-location": `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"limitctl","rules":[{"id":"syntax"}]}},"results":[{"ruleId":"syntax","message":{"text":"x."},"locations":[]}]}]}`,
	} {
		path := filepath.Join(t.TempDir(), name+".sarif")
		os.WriteFile(path, []byte(log), 0o644)
		if findings := validateSARIF(t, tool, path); len(findings) == 0 {
			t.Errorf("%s passed validation", name)
		} else {
			t.Logf("%s: %s", name, findings[0])
		}
	}
}

// sarifMultitoolVersion is the @microsoft/sarif-multitool npm package the tests validate with.
const sarifMultitoolVersion = "5.7.0"

// sarifMultitool returns Microsoft's SARIF multitool, installed with npm into the repository's
// build/ directory (ignored by git) the first time, as make installs redis-server when it is
// missing: the test runs in `make test`, never skipped.
func sarifMultitool(t *testing.T) string {
	t.Helper()
	platform, exe := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[runtime.GOOS], "Sarif.Multitool"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	pkg := "@microsoft/sarif-multitool-" + platform
	dir := filepath.Join(repoRoot(t), "build", "test-tools", "sarif-multitool-"+sarifMultitoolVersion)
	bin := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), exe)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("the SARIF multitool is installed with npm, which is not on PATH: install Node.js and npm")
	}
	os.MkdirAll(filepath.Dir(dir), 0o755)
	staging, err := os.MkdirTemp(filepath.Dir(dir), ".install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(staging)
	t.Logf("installing %s@%s into %s", pkg, sarifMultitoolVersion, dir)
	install := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", staging, pkg+"@"+sarifMultitoolVersion)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", pkg, err, out)
	}
	// npm may skip the package's postinstall (chmod u+x) under its install-script policy.
	os.Chmod(filepath.Join(staging, "node_modules", filepath.FromSlash(pkg), exe), 0o755)
	// Renamed whole, so a test killed mid-install never leaves a half-installed tool behind.
	if err := os.Rename(staging, dir); err != nil {
		if _, statErr := os.Stat(bin); statErr != nil { // another test process may have won the race
			t.Fatalf("installing the multitool: %v", err)
		}
	}
	return bin
}

// repoRoot is the repository's top directory, two above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}
