package limiterfile

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/exitcode"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every field of the file reads into the type the flags bind into, its paths as written.
func TestReadTakesEveryField(t *testing.T) {
	dir := t.TempDir()
	path := write(t, dir, "limiter.yaml", `# a comment
kind: concurrency
limit: 7
window: 250ms
hold: 5ms
stale-after: 2s
script:
  file: acquire.lua
  keys: '{key}'
  args: '{limit} {now_ms}'
  allowed: reply[1] == 1
  admit-at: reply[2]
  clock: client
  window-start: first-hit
  release: ZREM {key} {member}
  release-file: /abs/release.lua
  release-keys: '{key}'
  release-args: '{member}'
  setup:
    - command: SET {key}:cfg {limit} NX
    - file: init.lua {key} , {limit}
http:
  targets:
    - api=http://127.0.0.1:3000/limited/{key}
  method: POST
  headers:
    - 'X-Client: {key}'
  body: '{"client": "{key}"}'
  admitted: status == 200
  refused: status == 429 or status == 503
  keys:
    - api=rl:{key}*
assert:
  - custom.overshoot==0
  - custom.p99<5ms
`)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Limiter{Kind: "concurrency", Limit: 7, Window: 250 * time.Millisecond, Hold: 5 * time.Millisecond, StaleAfter: 2 * time.Second,
		Script: contract.Spec{File: "acquire.lua", Keys: "{key}", Args: "{limit} {now_ms}", Allowed: "reply[1] == 1",
			AdmitAt: "reply[2]", Clock: "client", WindowStart: contract.FirstHitStart, Release: "ZREM {key} {member}", ReleaseFile: "/abs/release.lua", ReleaseKeys: "{key}", ReleaseArgs: "{member}",
			Setup: []contract.SetupLine{{Flag: contract.FlagSetup, Text: "SET {key}:cfg {limit} NX"}, {Flag: contract.FlagSetupFile, Text: "init.lua {key} , {limit}"}}},
		HTTP: HTTP{Targets: []string{"api=http://127.0.0.1:3000/limited/{key}"}, Method: "POST", Headers: []string{"X-Client: {key}"},
			Body: `{"client": "{key}"}`, Admitted: "status == 200", Refused: "status == 429 or status == 503", Keys: []string{"api=rl:{key}*"}},
		Assert: []string{"custom.overshoot==0", "custom.p99<5ms"}}
	if !reflect.DeepEqual(f.Limiter, want) {
		t.Errorf("read\n%+v\nwant\n%+v", f.Limiter, want)
	}
	if len(f.gives) != len(leaves()) {
		t.Errorf("the file gives %d fields, want all %d", len(f.gives), len(leaves()))
	}
}

// A file that says something the tool would not do as written is refused with the file, the
// line and the field, as a usage error (exit 2).
func TestReadRefusesWhatItCannotTake(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"a misspelt field", "kind: fixed-window\nlimt: 3\n", "limiter.yaml:2: unknown field limt in the file; did you mean limit?"},
		{"a load flag", "workers: 64\n", "limiter.yaml:1: unknown field workers in the file (the file holds kind, limit, window, hold, stale-after, script, http, assert; the load, the target and the outputs stay flags)"},
		{"a misspelt script field", "script:\n  file: a.lua\n  keyz: '{key}'\n", "limiter.yaml:3: unknown field keyz in script; did you mean keys?"},
		{"a set-up step of neither kind", "script:\n  setup:\n    - run: SET {key} 1\n", "limiter.yaml:3: unknown field run in a set-up step"},
		{"a set-up step as a string", "script:\n  setup:\n    - SET {key} 1\n", "limiter.yaml:3: script.setup: want a list of steps"},
		{"a duration as a number", "window: 1000\n", `limiter.yaml:1: window: want a duration such as 250ms, 1s or 1m, got "1000"`},
		{"a limit in words", "limit: twenty\n", `limiter.yaml:1: limit: want a whole number, got "twenty"`},
		{"a field twice", "limit: 3\nkind: concurrency\nlimit: 4\n", "limiter.yaml:3: limit given twice (first on line 1)"},
		{"a field without a value", "script:\n  keys:\n", "limiter.yaml:2: script.keys: no value"},
		{"assertions as one string", "assert: custom.overshoot==0\n", "limiter.yaml:1: assert: want a list"},
		{"a script as a string", "script: a.lua\n", "limiter.yaml:1: script: want its fields (file, keys,"},
		{"not a mapping", "- kind\n", "limiter.yaml:1: the file is a mapping of fields"},
		{"not YAML", "kind: [\n", "limiter.yaml:1: did not find expected node content"},
		{"empty", "# nothing\n", "limiter.yaml is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(write(t, t.TempDir(), "limiter.yaml", tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) || code(err) != exitcode.Usage {
				t.Errorf("error %v (exit %d), want one containing %q, exit 2", err, code(err), tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "cannot read limiter file") {
		t.Errorf("a missing file: %v", err)
	}
}

// A flag given on the command line overrides the file's field (a list whole); the file fills
// in the rest, and what is given is either.
func TestLayerPutsTheFileUnderTheFlags(t *testing.T) {
	dir := t.TempDir()
	f, err := Read(write(t, dir, "limiter.yaml", "kind: fixed-window\nlimit: 100\nscript:\n  file: a.lua\n  args: '{limit}'\nassert:\n  - custom.overshoot==0\n"))
	if err != nil {
		t.Fatal(err)
	}
	flags := Limiter{Kind: "concurrency", Limit: 50, Window: time.Second, Assert: []string{"custom.p99<5ms"}}
	changed := map[string]bool{"limit": true, "assert": true}
	given := f.Layer(&flags, func(name string) bool { return changed[name] })
	want := Limiter{Kind: "fixed-window", Limit: 50, Window: time.Second, Script: contract.Spec{File: "a.lua", Args: "{limit}"},
		Assert: []string{"custom.p99<5ms"}}
	if !reflect.DeepEqual(flags, want) {
		t.Errorf("layered\n%+v\nwant\n%+v", flags, want)
	}
	for name, want := range map[string]bool{"limiter": true, "limit": true, "assert": true, "script": true, "script-args": true, "window": false, "script-keys": false} {
		if given(name) != want {
			t.Errorf("given(%s) = %v, want %v", name, given(name), want)
		}
	}
}

// What Marshal writes, Read reads back the same: every field, a blank template given as such,
// set-up steps of both kinds.
func TestMarshalRoundTrips(t *testing.T) {
	l := Limiter{Kind: "concurrency", Limit: 7, Window: 1500 * time.Millisecond, Hold: 5 * time.Millisecond, StaleAfter: time.Minute,
		Script: contract.Spec{File: "acquire.lua", Keys: "", Args: "{limit} \"\" {now_ms}", Allowed: "reply[1] == 1", Clock: "virtual", WindowStart: contract.EpochStart,
			Release: "none", Setup: []contract.SetupLine{{Flag: contract.FlagSetupFile, Text: "init.lua {key} , {limit}"}, {Flag: contract.FlagSetup, Text: "SET {key}:x 1"}}},
		Assert: []string{"custom.overshoot==0"}}
	all := func(string) bool { return true }
	text, err := Marshal(l, all)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := Read(write(t, dir, "limiter.yaml", string(text)))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	back := f.Limiter
	if !reflect.DeepEqual(back, l) {
		t.Errorf("read back\n%+v\nwrote\n%+v\n%s", back, l, text)
	}
	if !f.gives["script.keys"] || !strings.Contains(string(text), "keys: \"\"") {
		t.Errorf("an empty template given is written and read as given:\n%s", text)
	}
	// Only what was given is written.
	text, err = Marshal(l, func(flag string) bool { return flag == "limiter" || flag == "script-setup-file" })
	if err != nil {
		t.Fatal(err)
	}
	if got := string(text); !strings.Contains(got, "kind: concurrency\nscript:\n  setup:\n") || strings.Contains(got, "limit:") || strings.Contains(got, "keys:") {
		t.Errorf("wrote more or less than given:\n%s", got)
	}
}

// The schema: every field a flag sets has exactly one place, and flag names are unique.
func TestEveryFlagHasOneField(t *testing.T) {
	flags := Flags()
	for i, f := range flags {
		if slices.Contains(flags[:i], f) {
			t.Errorf("flag %s sets two fields", f)
		}
		if FieldOf(f) == "" {
			t.Errorf("flag %s has no field", f)
		}
	}
	if FieldOf("script-keys") != "script.keys" || FieldOf("limiter") != "kind" || FieldOf("workers") != "" {
		t.Errorf("Field: %q %q %q", FieldOf("script-keys"), FieldOf("limiter"), FieldOf("workers"))
	}
}

func code(err error) int {
	c, _ := exitcode.Classify(err, func(s string) string { return s })
	return c
}
