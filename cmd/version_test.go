package cmd

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// parseVersionText reads the version command's text output into its fields.
func parseVersionText(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "limitctl ") {
		t.Fatalf("want four lines starting with 'limitctl VERSION', got:\n%s", out)
	}
	fields := map[string]string{"version": strings.TrimPrefix(lines[0], "limitctl ")}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		if !ok || v == "" {
			t.Fatalf("line %q is not 'key: value'", l)
		}
		fields[k] = v
	}
	return fields
}

func TestVersionBinary(t *testing.T) {
	text := execBinary(t, nil, "version").wantExit(t, 0)
	fields := parseVersionText(t, text.out)
	if fields["go"] != runtime.Version() {
		t.Fatalf("go %q, want %q", fields["go"], runtime.Version())
	}
	for _, k := range []string{"version", "commit", "date"} {
		if fields[k] == "" {
			t.Fatalf("%s is empty:\n%s", k, text.out)
		}
	}

	js := execBinary(t, nil, "version", "-o", "json").wantExit(t, 0)
	var v map[string]any
	if err := json.Unmarshal([]byte(js.out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, js.out)
	}
	want := map[string]any{"schema_version": float64(1), "version": fields["version"], "commit": fields["commit"],
		"date": fields["date"], "go_version": runtime.Version()}
	for k, w := range want {
		if v[k] != w {
			t.Fatalf("%s = %v, want %v\n%s", k, v[k], w, js.out)
		}
	}
}

// TestVersionLdflags builds the binary the way the release does, with the version, commit and
// date set by -ldflags -X, and checks both outputs carry exactly those.
func TestVersionLdflags(t *testing.T) {
	skipInShortMode(t)
	bin := filepath.Join(t.TempDir(), "limitctl")
	ldflags := "-X main.version=1.2.3 -X main.commit=abc -X main.date=2026-01-01"
	if out, err := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "limitctl 1.2.3\ncommit: abc\ndate: 2026-01-01\ngo: " + runtime.Version() + "\n"
	if string(out) != want {
		t.Fatalf("version printed\n%s\nwant\n%s", out, want)
	}
	out, err = exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		SchemaVersion int    `json:"schema_version"`
		Version       string `json:"version"`
		Commit        string `json:"commit"`
		Date          string `json:"date"`
		GoVersion     string `json:"go_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.SchemaVersion != 1 || v.Version != "1.2.3" || v.Commit != "abc" || v.Date != "2026-01-01" || v.GoVersion != runtime.Version() {
		t.Fatalf("version -o json: %+v", v)
	}
}
