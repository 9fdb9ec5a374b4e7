package cmd

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name                  string
		build                 Build
		info                  *debug.BuildInfo
		version, commit, date string
	}{
		{"ldflags win", Build{Version: "1.2.3", Commit: "abc", Date: "2026-01-01"},
			&debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: vcs("vcs.revision", "fff", "vcs.time", "2020-01-01T00:00:00Z")},
			"1.2.3", "abc", "2026-01-01"},
		{"no build info", Build{}, nil, "dev", "unknown", "unknown"},
		{"go build without VCS", Build{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev", "unknown", "unknown"},
		{"go install at a tag", Build{}, &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "0.1.0", "unknown", "unknown"},
		{"go install at a commit", Build{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-abcdef123456"}},
			"0.0.0-20260102030405-abcdef123456", "abcdef123456", "2026-01-02T03:04:05Z"},
		{"go install after a tag", Build{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20260102030405-abcdef123456"}},
			"0.1.1-0.20260102030405-abcdef123456", "abcdef123456", "2026-01-02T03:04:05Z"},
		{"go build in a dirty checkout", Build{},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-abcdef123456+dirty"},
				Settings: vcs("vcs.revision", "abcdef1234567890", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")},
			"0.0.0-20260102030405-abcdef123456+dirty", "abcdef1234567890-dirty", "2026-01-02T03:04:05Z"},
		{"ldflags version, VCS commit", Build{Version: "1.0.0"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "abc", "vcs.time", "2026-01-01T00:00:00Z")},
			"1.0.0", "abc", "2026-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := versionFrom(tt.build, tt.info, "go1.99")
			if v.Version != tt.version || v.Commit != tt.commit || v.Date != tt.date || v.GoVersion != "go1.99" || v.SchemaVersion != 1 {
				t.Fatalf("got %+v, want version %q commit %q date %q", v, tt.version, tt.commit, tt.date)
			}
		})
	}
}

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
	var v versionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if (v != versionInfo{SchemaVersion: 1, Version: "1.2.3", Commit: "abc", Date: "2026-01-01", GoVersion: runtime.Version()}) {
		t.Fatalf("version -o json: %+v", v)
	}
}
