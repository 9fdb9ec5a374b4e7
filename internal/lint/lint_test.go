package lint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/golden"
)

// fixtureDir holds the Lua fixtures, at the repository root so the other
// commands' tests can reuse them.
const fixtureDir = "../../testdata/lint"

// fixtures returns the fixture paths, sorted.
func fixtures(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.lua"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	return paths
}

// lintFixture lints a fixture under the name it has from the repository
// root, so golden files read like `limitctl lint testdata/lint/x.lua`.
func lintFixture(t *testing.T, path string) []Diagnostic {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Lint("testdata/lint/"+filepath.Base(path), src)
}

func formatAll(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func TestFixturesMatchTheirGoldenDiagnostics(t *testing.T) {
	for _, path := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".lua")
		t.Run(name, func(t *testing.T) {
			got := formatAll(lintFixture(t, path))
			golden.Check(t, strings.TrimSuffix(path, ".lua")+".golden", got)
		})
	}
}

// The clean-* fixtures guard against false positives. They are checked here
// as well as by their (empty) golden files so that -update cannot bless a
// false positive by accident.
func TestCleanFixturesHaveNoDiagnostics(t *testing.T) {
	for _, path := range fixtures(t) {
		name := filepath.Base(path)
		if !strings.HasPrefix(name, "clean-") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if ds := lintFixture(t, path); len(ds) != 0 {
				t.Errorf("want no diagnostics, got:\n%s", formatAll(ds))
			}
		})
	}
}

func TestEveryRuleHasAFixtureThatTriggersIt(t *testing.T) {
	for _, r := range Rules() {
		t.Run(r.Name, func(t *testing.T) {
			ds := lintFixture(t, filepath.Join(fixtureDir, r.Name+".lua"))
			for _, d := range ds {
				if d.Rule == r.Name {
					return
				}
			}
			t.Errorf("testdata/lint/%s.lua never reports %s", r.Name, r.Name)
		})
	}
}

func TestRulesAreTheSpecifiedOnesWithFixedSeverities(t *testing.T) {
	want := map[string]string{
		RuleSyntax:           SeverityError,
		RuleGlobalWrite:      SeverityError,
		RuleUndeclaredKey:    SeverityError,
		RuleKeysCommand:      SeverityError,
		RuleNondeterministic: SeverityWarning,
		RuleMissingExpire:    SeverityWarning,
		RuleUnboundedLoop:    SeverityWarning,
		RuleArgvNumber:       SeverityWarning,
		RuleShebang:          SeverityError,
		RuleReadonlyWrite:    SeverityError,
		RuleLibrary:          SeverityError,
		RuleReplyType:        SeverityError,
		RuleReplyKey:         SeverityWarning,
	}
	got := Rules()
	if len(got) != len(want) {
		t.Fatalf("Rules() has %d rules, want %d", len(got), len(want))
	}
	for _, r := range got {
		if want[r.Name] != r.Severity {
			t.Errorf("rule %q: severity %q, want %q", r.Name, r.Severity, want[r.Name])
		}
		if r.Description == "" {
			t.Errorf("rule %q has no description", r.Name)
		}
	}
}

func TestDiagnosticPrintsLikeACompiler(t *testing.T) {
	d := Diagnostic{File: "a.lua", Line: 3, Col: 7, Severity: SeverityError, Rule: RuleGlobalWrite, Message: "declare it local"}
	if got, want := d.String(), "a.lua:3:7: error: global-write: declare it local"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestDiagnosticJSONFieldNamesAreTheSpecContract(t *testing.T) {
	d := Diagnostic{File: "a.lua", Line: 3, Col: 7, Severity: SeverityWarning, Rule: RuleArgvNumber, Message: "m"}
	got, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"file":"a.lua","line":3,"col":7,"severity":"warning","rule":"argv-number","message":"m"}`
	if string(got) != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestHasErrors(t *testing.T) {
	errorDiag := Diagnostic{Severity: SeverityError}
	warningDiag := Diagnostic{Severity: SeverityWarning}
	tests := []struct {
		name   string
		ds     []Diagnostic
		strict bool
		want   bool
	}{
		{"nothing found never fails", nil, true, false},
		{"an error fails", []Diagnostic{warningDiag, errorDiag}, false, true},
		{"warnings alone pass", []Diagnostic{warningDiag}, false, false},
		{"warnings fail when strict", []Diagnostic{warningDiag}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HasErrors(tt.ds, tt.strict); got != tt.want {
				t.Errorf("HasErrors(strict=%v) = %v, want %v", tt.strict, got, tt.want)
			}
		})
	}
}

func TestLintOfACleanScriptIsEmptyNotNil(t *testing.T) {
	// cmd/lint encodes the slice as JSON: [] rather than null.
	if ds := Lint("empty.lua", nil); ds == nil || len(ds) != 0 {
		t.Errorf("Lint(empty) = %#v, want an empty slice", ds)
	}
}
