package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

// hammerParsed runs limitctl hammer args without a server: the options the run would get
// (nil when it was not called), the exit code, stdout and stderr.
func hammerParsed(t *testing.T, args ...string) (*hammerOptions, int, string, string) {
	t.Helper()
	var got *hammerOptions
	streams, _, out, errOut := TestStreams()
	f := NewFactory(streams, Build{Version: "test"})
	f.Getenv = func(string) string { return "" }
	root := NewRootCmd(f)
	old, _, err := root.Find([]string{"hammer"})
	if err != nil {
		t.Fatal(err)
	}
	root.RemoveCommand(old)
	root.AddCommand(newHammerCmd(f, func(_ context.Context, _ *Factory, o *hammerOptions) error { got = o; return nil }))
	usageArgs(root)
	code := runRoot(context.Background(), f, root, append([]string{"hammer"}, args...))
	return got, code, out.String(), errOut.String()
}

// statedRun is what a limiter file decides of a run, as one comparable text: the limiter,
// its numbers, the strategies, the assertions and the custom strategy's contract as the JSON
// prints it.
func statedRun(t *testing.T, o hammer.Options) string {
	t.Helper()
	var contract any
	if o.Contract != nil {
		contract = o.Contract.Spec
	}
	var asserts []string
	for _, a := range o.Assertions {
		asserts = append(asserts, a.Expr)
	}
	b, err := json.MarshalIndent(map[string]any{"limiter": o.Limiter, "limit": o.Limit, "window": o.Window, "hold": o.Hold,
		"stale_after": o.StaleAfter, "strategies": o.Strategies, "assert": asserts, "contract": contract}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// printedAndReadBack checks that hammer ARGS --print-limiter writes a file that, read back with
// -f (from the current folder), states the same run as the flags; it returns the file.
func printedAndReadBack(t *testing.T, args []string) string {
	t.Helper()
	direct, code, _, errOut := hammerParsed(t, args...)
	if code != ExitOK || direct == nil {
		t.Fatalf("hammer %q: exit %d\n%s", args, code, errOut)
	}
	printed, code, file, errOut := hammerParsed(t, append(args, "--print-limiter")...)
	if code != ExitOK || printed != nil || file == "" {
		t.Fatalf("--print-limiter: exit %d, ran %v\n%s%s", code, printed != nil, file, errOut)
	}
	// Saved anywhere: its paths are as on the command line, relative to where limitctl runs.
	path := filepath.Join(t.TempDir(), "limiter.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	back, code, _, errOut := hammerParsed(t, append([]string{"-f", path}, runFlags(args)...)...)
	if code != ExitOK || back == nil {
		t.Fatalf("-f of the printed file: exit %d\n%s\n%s", code, errOut, file)
	}
	if want, got := statedRun(t, direct.run), statedRun(t, back.run); want != got {
		t.Errorf("hammer %q states\n%s\nits printed file, read back\n%s\nthe file:\n%s", args, want, got, file)
	}
	return file
}

// runFlags are the flags of args that the limiter file does not hold (the load, the
// strategies), each with its value.
func runFlags(args []string) []string {
	c := newHammerCmd(NewFactory(nil, Build{}), nil)
	held := map[string]bool{}
	for _, name := range limiterfile.Flags() {
		held[name] = true
	}
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		flag := c.Flags().Lookup(name)
		takesValue := flag != nil && flag.NoOptDefVal == "" && !inline
		if !held[name] {
			out = append(out, args[i])
			if takesValue && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
		if takesValue {
			i++
		}
	}
	return out
}

// hammer --print-limiter writes the file the flags state; read back with -f it states the same
// run (flags -> file -> the same JSON contract), for every kind of field: numbers, a script's
// whole contract, a release script, set-up steps of both kinds in their order, an empty
// template, assertions.
func TestPrintLimiterRoundTrips(t *testing.T) {
	t.Chdir("..") // the examples name testdata/ from the repository's root
	for _, args := range [][]string{
		{},
		{"--limiter", "sliding-window", "--limit", "100", "--window", "250ms", "--strategies", "watch,lua", "--assert", "lua.overshoot==0"},
		{"--limiter", "concurrency", "--limit", "5", "--hold", "10ms", "--stale-after", "3s", "--script", "testdata/limiters/concurrency_slots.lua",
			"--script-keys", "{key}{slot}", "--script-args", "{key} {stale_after_s} {member}", "--script-allowed", "reply ~= false",
			"--script-release-file", "testdata/limiters/concurrency_slot_release.lua", "--script-release-keys", "{reply}", "--script-release-args", "{member}",
			"--assert", "custom.overshoot==0", "--assert", "custom.p99<50ms"},
		{"--limiter", "concurrency", "--script", "testdata/limiters/semaphore_try_acquire.lua",
			"--script-setup-file", "testdata/limiters/semaphore_try_set_permits.lua {key} , {limit}", "--script-setup", "PEXPIRE {key} 600000",
			"--script-keys", "{key}", "--script-args", "{cost}", "--script-allowed", "reply == 1", "--script-release", "INCRBY {key} {cost}"},
		{"--limiter", "fixed-window", "--script", "testdata/limiters/fixed_window_no_keys.lua", "--script-keys", "", "--script-args", "{key} {limit} {window_ms}",
			"--clock", "server", "--script-allowed", "reply[1] == 1"},
		{"--limiter", "fixed-window", "--script", "testdata/limiters/fixed_window_first_hit.lua", "--script-keys", "{key}",
			"--script-args", "{cost} {window_s}", "--window-start", "first-hit", "--script-allowed", "reply[1] <= {limit}"},
		{"--limiter", "token-bucket", "--window", "2s", "--script", "testdata/limiters/reserve_slots.lua", "--script-keys", "{key}",
			"--script-args", "{now_ms} {window_ms} {limit}", "--script-admit-at", "tonumber(reply)"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) { printedAndReadBack(t, args) })
	}
}

// A flag given on the command line overrides the file's field; the file fills in the rest, and
// a script the file names is found as a flag's would be, from where limitctl runs.
func TestLimiterFileUnderTheFlags(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join("..", "testdata", "limiters", "fixed_window_first_hit.lua")
	file := filepath.Join(dir, "limiter.yaml")
	os.WriteFile(file, []byte("kind: fixed-window\nlimit: 100\nwindow: 2s\nscript:\n  file: "+script+"\n  keys: '{key}'\n  args: '{cost} {window_s}'\nassert:\n  - custom.overshoot==0\n"), 0o644)
	got, code, _, errOut := hammerParsed(t, "-f", file, "--limit", "50", "--assert", "custom.errors==0", "--workers", "8")
	if code != ExitOK || got == nil {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	o := got.run
	if o.Limiter != "fixed-window" || o.Limit != 50 || o.Window.String() != "2s" || o.Workers != 8 || o.Script != script ||
		o.Contract == nil || o.Contract.Spec.Args != "{cost} {window_s}" || len(o.Assertions) != 1 || o.Assertions[0].Expr != "custom.errors==0" {
		t.Errorf("layered run: %s", statedRun(t, o))
	}
	// A field the file gets wrong is a usage error naming the file and its line, before anything runs.
	os.WriteFile(file, []byte("kind: fixed-window\nscript:\n  file: "+script+"\n  allowd: reply == 1\n"), 0o644)
	if got, code, _, errOut := hammerParsed(t, "-f", file); code != ExitUsage || got != nil || !strings.Contains(errOut, file+":4: unknown field allowd in script; did you mean allowed?") {
		t.Errorf("a misspelt field: exit %d, ran %v\n%s", code, got != nil, errOut)
	}
	// So is a value the flag would refuse, named as the flag.
	os.WriteFile(file, []byte("kind: fixed-window\nlimit: -1\n"), 0o644)
	if _, code, _, errOut := hammerParsed(t, "-f", file); code != ExitUsage || !strings.Contains(errOut, "--limit must be 0 or more") {
		t.Errorf("a limit below 0: exit %d\n%s", code, errOut)
	}
}

// The file's fields are the hammer's flags: each field stands for a flag the command has.
func TestEveryLimiterFileFieldIsAHammerFlag(t *testing.T) {
	c := newHammerCmd(NewFactory(nil, Build{}), nil)
	for _, name := range limiterfile.Flags() {
		if c.Flags().Lookup(name) == nil {
			t.Errorf("the limiter file's %s stands for --%s, which hammer does not have", limiterfile.FieldOf(name), name)
		}
	}
}

// Every limiter file the docs run (docs/examples) states the same run as the flags in its
// "# As flags:" line, and so does what --print-limiter writes for those flags.
func TestEveryExampleLimiterFileRoundTrips(t *testing.T) {
	t.Chdir("..") // the flags name testdata/ from the repository's root
	files, _ := filepath.Glob(filepath.Join("docs", "examples", "*.yaml"))
	if len(files) < 17 {
		t.Fatalf("%d example limiter files, want one per example of five or more contract flags (17)", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, line, found := strings.Cut(string(text), "\n# As flags: ")
			if !found {
				t.Fatalf("%s has no '# As flags:' line", file)
			}
			line, _, _ = strings.Cut(line, "\n")
			args := shellWords(line)
			printedAndReadBack(t, args)
			direct, code, _, errOut := hammerParsed(t, args...)
			fromFile, fcode, _, ferrOut := hammerParsed(t, "-f", file)
			if code != ExitOK || fcode != ExitOK {
				t.Fatalf("flags: exit %d %s; the file: exit %d %s", code, errOut, fcode, ferrOut)
			}
			if want, got := statedRun(t, direct.run), statedRun(t, fromFile.run); want != got {
				t.Errorf("%s states\n%s\nits flags\n%s", file, got, want)
			}
		})
	}
}
