package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// actionlintVersion pins github.com/rhysd/actionlint, run with go run at that version.
const actionlintVersion = "v1.7.12"

// action is what action.yml declares.
type action struct {
	Name, Description string
	Inputs            map[string]struct {
		Description string
		Required    bool
		Default     *string
	}
	Runs struct {
		Using string
		Steps []struct {
			Name, ID, If, Shell, Run, Uses string
			Env                            map[string]string
			With                           map[string]string
		}
	}
}

func readAction(t *testing.T) (action, []byte) {
	t.Helper()
	raw, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(raw, &a); err != nil {
		t.Fatalf("action.yml does not parse: %v", err)
	}
	return a, raw
}

// expression is a ${{ ... }} of the Actions expression language.
var expression = regexp.MustCompile(`\$\{\{[^}]*\}\}`)

func TestActionIsACompositeWithItsInputsDeclaredAndUsed(t *testing.T) {
	a, raw := readAction(t)
	if a.Runs.Using != "composite" || a.Name == "" || a.Description == "" {
		t.Fatalf("action.yml: using %q, name %q: want a named composite action", a.Runs.Using, a.Name)
	}
	for _, in := range []string{"version", "args", "redis"} {
		if _, ok := a.Inputs[in]; !ok || a.Inputs[in].Description == "" {
			t.Errorf("input %s is not declared with a description", in)
		}
	}
	if !a.Inputs["args"].Required {
		t.Error("args must be required: the action runs one limitctl command")
	}
	// Every inputs.X the steps use is declared, and every declared input is used.
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`inputs\.([A-Za-z0-9_-]+)`).FindAllStringSubmatch(string(raw), -1) {
		used[m[1]] = true
		if _, ok := a.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m[1])
		}
	}
	for in := range a.Inputs {
		if !used[in] {
			t.Errorf("input %s is declared but never used", in)
		}
	}
	// Every shell step is bash that parses, and takes inputs through env, never spliced into the
	// script (a value with a quote or $(...) in it would run as code).
	for _, st := range a.Runs.Steps {
		if st.Run == "" {
			continue
		}
		if st.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash (composite run steps must name their shell)", st.Name, st.Shell)
		}
		if expression.MatchString(st.Run) {
			t.Errorf("step %q splices an expression into its script: %s", st.Name, expression.FindString(st.Run))
		}
		check := exec.Command("bash", "-n")
		check.Stdin = strings.NewReader(st.Run)
		if out, err := check.CombinedOutput(); err != nil {
			t.Errorf("step %q does not pass bash -n: %v\n%s\n%s", st.Name, err, out, st.Run)
		}
	}
}

// The action's last step, run as the runner would run it, with the built limitctl on PATH:
// args split as a shell splits them (quotes, globs), and the exit code is limitctl's.
func TestActionRunsLimitctlWithTheArgs(t *testing.T) {
	a, _ := readAction(t)
	step := a.Runs.Steps[len(a.Runs.Steps)-1]
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "limitctl"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	runStep := func(args string) (string, int) {
		cmd := exec.Command("bash", "-e", "-c", step.Run)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "LIMITCTL_ARGS="+args)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if !strings.Contains(step.Env["LIMITCTL_ARGS"], "inputs.args") {
		t.Fatalf("the last step takes LIMITCTL_ARGS from %q, want inputs.args", step.Env["LIMITCTL_ARGS"])
	}
	out, code := runStep("lint -o github --disable 'missing-expire' testdata/lint/global-*.lua")
	if code != 3 || !strings.Contains(out, "::error file=testdata/lint/global-write.lua,line=") {
		t.Errorf("lint through the action: exit %d, want 3 with annotations:\n%s", code, out)
	}
	if out, code := runStep("lint scripts/concurrency_acquire.lua"); code != 0 {
		t.Errorf("lint of a clean script through the action: exit %d\n%s", code, out)
	}
}

// readmeWorkflows are the README's ```yaml blocks that are whole workflows (on: and jobs:).
func readmeWorkflows(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var flows []string
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(block[1], "\non: ") && strings.Contains(block[1], "\njobs:") {
			flows = append(flows, block[1])
		}
	}
	return flows
}

// The README's workflow passes actionlint, with the action itself (uses: ./) in place of the
// published one, so each with: is checked against action.yml's inputs.
func TestReadmeWorkflowPassesActionlint(t *testing.T) {
	flows := readmeWorkflows(t)
	if len(flows) == 0 {
		t.Fatal("the README shows no workflow")
	}
	for _, flow := range flows {
		if !strings.Contains(flow, "uses: limitctl/limitctl@") || !strings.Contains(flow, "hammer -f ") || !strings.Contains(flow, "lint -o github") {
			t.Errorf("the README's workflow should use the action for hammer -f (the limiter file) and lint -o github:\n%s", flow)
		}
		if findings := actionlint(t, regexp.MustCompile(`uses: limitctl/limitctl@\S+`).ReplaceAllString(flow, "uses: ./")); findings != "" {
			t.Errorf("actionlint:\n%s\n%s", findings, flow)
		}
	}
	// And actionlint does check the inputs: a with: the action does not declare is reported.
	bad := "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: ./\n        with:\n          argz: lint x.lua\n"
	if findings := actionlint(t, bad); !strings.Contains(findings, `input "argz" is not defined in action`) || !strings.Contains(findings, `missing input "args"`) {
		t.Errorf("actionlint did not report an undeclared input and a missing one:\n%s", findings)
	}
}

// actionlint lints flow as .github/workflows/ci.yml of a repository whose root holds this
// action.yml, and returns what it reports (empty: nothing).
func actionlint(t *testing.T, flow string) string {
	t.Helper()
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".github", "workflows"), 0o755)
	actionYML, _ := os.ReadFile("action.yml")
	os.WriteFile(filepath.Join(repo, "action.yml"), actionYML, 0o644)
	os.WriteFile(filepath.Join(repo, ".github", "workflows", "ci.yml"), []byte(flow), 0o644)
	os.Mkdir(filepath.Join(repo, ".git"), 0o755) // actionlint finds the repository root by it
	cmd := exec.Command("go", "run", "github.com/rhysd/actionlint/cmd/actionlint@"+actionlintVersion, "-no-color", filepath.Join(".github", "workflows", "ci.yml"))
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return string(out) // 1: problems found
	} else if err != nil {
		t.Fatalf("go run actionlint@%s: %v\n%s", actionlintVersion, err, out)
	}
	return ""
}

// The pre-commit hook lints Lua files with limitctl lint: its entry, given a fixture as
// pre-commit passes the staged files, fails on a script Redis would refuse and passes a clean one.
func TestPreCommitHookLintsLuaFiles(t *testing.T) {
	raw, err := os.ReadFile(".pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct{ ID, Name, Entry, Language, Files string }
	if err := yaml.Unmarshal(raw, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	i := slices.IndexFunc(hooks, func(h struct{ ID, Name, Entry, Language, Files string }) bool { return h.ID == "limitctl-lint" })
	if i < 0 {
		t.Fatalf("no limitctl-lint hook in %+v", hooks)
	}
	hook := hooks[i]
	if hook.Language != "golang" || hook.Name == "" {
		t.Errorf("hook %+v: want language golang and a name", hook)
	}
	files := regexp.MustCompile(hook.Files)
	if !files.MatchString("scripts/acquire.lua") || files.MatchString("acquire.lua.bak") || files.MatchString("main.go") {
		t.Errorf("files %q should match exactly the .lua files", hook.Files)
	}
	// language: golang installs the module's main package, which is this one.
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "limitctl"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	entry := strings.Fields(hook.Entry)
	if entry[0] != "limitctl" {
		t.Fatalf("entry %q does not run limitctl", hook.Entry)
	}
	run := func(files ...string) (string, int) {
		cmd := exec.Command(filepath.Join(bin, entry[0]), append(entry[1:], files...)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	bad := filepath.Join("testdata", "lint", "global-write.lua")
	if out, code := run(bad, filepath.Join("scripts", "fixed_window.lua")); code != 3 || !strings.Contains(out, bad+":5:1: error: global-write:") {
		t.Errorf("hook on %s: exit %d, want 3 naming the line:\n%s", bad, code, out)
	}
	if out, code := run(filepath.Join("scripts", "fixed_window.lua"), filepath.Join("scripts", "token_bucket.lua")); code != 0 {
		t.Errorf("hook on clean scripts: exit %d\n%s", code, out)
	}
}

// The CI page tells how to use the hook.
func TestReadmeShowsThePreCommitHook(t *testing.T) {
	doc, _ := os.ReadFile(filepath.Join("docs", "ci.md"))
	if !strings.Contains(string(doc), "repo: https://github.com/limitctl/limitctl") || !strings.Contains(string(doc), "id: limitctl-lint") {
		t.Error("docs/ci.md lacks the .pre-commit-config.yaml lines for limitctl-lint")
	}
}
