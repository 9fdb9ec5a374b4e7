package cmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// customVerdict is what these tests read of a --script run's JSON: the custom strategy's
// verdict and the numbers behind it.
type customVerdict struct {
	Verdict      string `json:"verdict"`
	Admitted     int64  `json:"admitted"`
	Rejected     int64  `json:"rejected"`
	Errors       int64  `json:"errors"`
	Overshoot    int64  `json:"overshoot"`
	FalseRejects *int64 `json:"false_rejects"`
}

func decodeCustom(t *testing.T, r result) customVerdict {
	t.Helper()
	var doc struct {
		Strategies []customVerdict `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil || len(doc.Strategies) != 1 {
		t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.out, r.errOut)
	}
	return doc.Strategies[0]
}

// wantNoKeys fails when the server holds any key: the run's clean-up must find everything the
// script and its set-up wrote, however they named it under {key}.
func wantNoKeys(t *testing.T, srv *redistest.Server) {
	t.Helper()
	keys, err := srv.Client(t).Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Fatalf("keys left behind: %q", keys)
	}
}

// A script called with no KEYS at all (StackExchange.Redis's LuaScript, its counter's name
// passed as a string): lint refuses its ARGV keys before any load, with exit 4 and the ways
// on; with --no-lint it is judged exact on one process (false_rejects a number), the
// counters it named from ARGV are cleaned up, and the same script one comparison off is caught.
func TestHammerScriptWithNoKeys(t *testing.T) {
	srv := redistest.Start(t)
	dir := filepath.Join("..", "testdata", "limiters")
	hammer := func(script string, extra ...string) result {
		return run(t, append([]string{"--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--script", filepath.Join(dir, script),
			"--script-keys", "", "--script-args", "{key}:{window_index} {window_ms} {limit}", "--script-allowed", "reply == 1",
			"--duration", "3s", "-o", "json"}, extra...)...)
	}
	r := hammer("fixed_window_no_keys.lua").wantExit(t, ExitLintRefused)
	for _, want := range []string{"lint refused", "before any load: undeclared-key (lines 18, 20)", "-- limitctl:ignore undeclared-key", "--no-lint",
		"StackExchange.Redis's LuaScript"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
		}
	}
	if !strings.Contains(r.out, `"exit_code": 4`) {
		t.Errorf("the JSON error does not carry exit 4:\n%s", r.out)
	}
	wantNoKeys(t, srv)

	r = hammer("fixed_window_no_keys.lua", "--no-lint").wantExit(t, ExitOK)
	if !strings.Contains(r.errOut, "custom: KEYS (none), ARGV '{key}:{window_index} {window_ms} {limit}'") {
		t.Errorf("the contract line does not say no KEYS:\n%s", r.errOut)
	}
	st := decodeCustom(t, r)
	if st.Verdict != "exact" || st.FalseRejects == nil || *st.FalseRejects != 0 || st.Errors != 0 || st.Rejected == 0 {
		t.Errorf("correct script with no KEYS: %+v, want exact with false_rejects 0", st)
	}
	wantNoKeys(t, srv)

	r = hammer(filepath.Join("buggy", "fixed_window_no_keys_off_by_one.lua"), "--no-lint").wantExit(t, ExitCheckFailed)
	if st := decodeCustom(t, r); st.Overshoot < 1 || !strings.Contains(st.Verdict, "OVERSHOOT") {
		t.Errorf("one too many per window: %+v, want OVERSHOOT", st)
	}
	wantNoKeys(t, srv)
}

// A semaphore whose permits a set-up call creates first (Redisson's RSemaphore: trySetPermits,
// then tryAcquire and release): without the set-up every acquire is refused with room (TOO
// STRICT); with it, run in the order given (the permits, then their TTL) on every key, the run
// on one process is judged exact with false_rejects a number, what the set-up wrote is cleaned
// up, and the acquire one comparison off is caught.
func TestHammerSetupCreatesASemaphoresPermits(t *testing.T) {
	srv := redistest.Start(t)
	dir := filepath.Join("..", "testdata", "limiters")
	setup := []string{"--script-setup-file", filepath.Join(dir, "semaphore_try_set_permits.lua") + " {key} , {limit}", "--script-setup", "PEXPIRE {key} 600000"}
	var r result
	hammer := func(script string, code int, extra ...string) customVerdict {
		r = run(t, append([]string{"--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--script", filepath.Join(dir, script),
			"--script-keys", "{key}", "--script-args", "{cost}", "--script-allowed", "reply == 1", "--script-release", "INCRBY {key} {cost}",
			"--duration", "1500ms", "-o", "json"}, extra...)...).wantExit(t, code)
		wantNoKeys(t, srv)
		return decodeCustom(t, r)
	}
	if st := hammer("semaphore_try_acquire.lua", ExitCheckFailed); st.Admitted != 0 || st.FalseRejects == nil || *st.FalseRejects == 0 || st.Verdict != "TOO STRICT" {
		t.Errorf("no permits set up: %+v, want every acquire refused with room (TOO STRICT)", st)
	}
	st := hammer("semaphore_try_acquire.lua", ExitOK, setup...)
	if st.Verdict != "exact" || st.FalseRejects == nil || *st.FalseRejects != 0 || st.Admitted < 100 || st.Rejected == 0 {
		t.Errorf("permits set up: %+v, want exact, contended, with false_rejects 0", st)
	}
	// The summary says how the state was set up, in the order the steps ran.
	var doc struct {
		Strategies []struct {
			Contract struct {
				Setup []string `json:"setup"`
			} `json:"contract"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Strategies[0].Contract.Setup; len(got) != 2 || !strings.HasPrefix(got[0], "--script-setup-file '") || got[1] != "--script-setup 'PEXPIRE {key} 600000'" {
		t.Errorf("contract.setup %q, want the file step, then the command", got)
	}
	if !strings.Contains(r.errOut, "set up by 2 steps on every key before the load") {
		t.Errorf("the contract line does not say the set-up:\n%s", r.errOut)
	}
	// The permit too many shows only when all 21 are taken at once: held 20ms, 64 workers keep
	// the permits taken however slowly a busy machine cycles; still it runs until it has it (at most 15).
	buggy := append([]string{"--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--script", filepath.Join(dir, "buggy", "semaphore_try_acquire_off_by_one.lua"),
		"--script-keys", "{key}", "--script-args", "{cost}", "--script-allowed", "reply == 1", "--script-release", "INCRBY {key} {cost}",
		"--duration", "1500ms", "--hold", "20ms", "-o", "json"}, setup...)
	for i := 0; i < 15; i++ {
		if r = run(t, buggy...); r.code == ExitCheckFailed {
			break
		}
	}
	r.wantExit(t, ExitCheckFailed)
	wantNoKeys(t, srv)
	if st := decodeCustom(t, r); st.Overshoot != 1 {
		t.Errorf("a permit taken below zero: %+v, want overshoot 1", st)
	}
}

// A scheduler that works only on the settings its init call wrote and for a client it has
// registered (Bottleneck's datastore: init, then register_client, then register per job): the
// two set-up scripts run in the order given, so the reservoir's windows (opened by a call, not
// on the epoch) are judged exact; without register_client every call errors UNKNOWN_CLIENT;
// a reservoir refilled a thousand times too often is caught.
func TestHammerSetupRunsInitThenRegisterClient(t *testing.T) {
	srv := redistest.Start(t)
	dir := filepath.Join("..", "testdata", "limiters")
	initStep := []string{"--script-setup-file", filepath.Join(dir, "bottleneck_init.lua") +
		" {key}:settings {key}:client_last_registered , {now_ms} 0 reservoir {limit} reservoirRefreshInterval {window_ms} reservoirRefreshAmount {limit} minTime 0 timeout 600000"}
	registerStep := []string{"--script-setup-file", filepath.Join(dir, "bottleneck_register_client.lua") + " {key}:settings {key}:client_last_registered , {now_ms} hammer"}
	// A busy machine can answer so late that no more admits are judged than the limit: the run
	// says "not judged" (exit 3), rightly. 16 workers, not 64, keep more calls quick enough to
	// judge, and such a run is run again (at most 5 times) until judged.
	hammer := func(script string, code int, extra ...string) (customVerdict, result) {
		for i := 0; ; i++ {
			r := run(t, append([]string{"--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--script", filepath.Join(dir, script),
				"--script-keys", "{key}:settings {key}:client_last_registered", "--script-args", "{now_ms} hammer {cost}",
				"--script-allowed", "reply[1] == 1", "--duration", "3s", "--workers", "16", "-o", "json"}, extra...)...)
			wantNoKeys(t, srv)
			if st := decodeCustom(t, r); st.Verdict != "not judged" || i == 4 {
				r.wantExit(t, code)
				return st, r
			}
		}
	}
	st, _ := hammer("bottleneck_register.lua", ExitOK, append(initStep, registerStep...)...)
	if st.Verdict != "exact" || st.FalseRejects == nil || *st.FalseRejects != 0 || st.Rejected == 0 || st.Errors != 0 {
		t.Errorf("init, then register_client: %+v, want exact, contended, with false_rejects 0", st)
	}
	st, r := hammer("bottleneck_register.lua", ExitCheckFailed, initStep...)
	if st.Admitted != 0 || !strings.Contains(r.errOut, "UNKNOWN_CLIENT") {
		t.Errorf("no client registered: %+v, want every call to error UNKNOWN_CLIENT\n%s", st, r.errOut)
	}
	if st, _ := hammer(filepath.Join("buggy", "bottleneck_register_interval_in_seconds.lua"), ExitCheckFailed, append(initStep, registerStep...)...); !strings.Contains(st.Verdict, "OVERSHOOT") {
		t.Errorf("a reservoir refilled every millisecond: %+v, want OVERSHOOT", st)
	}
}

// A set-up step Redis refuses stops the run before any load (exit 1), naming the step, the key
// and Redis's reply, and leaves nothing behind; a step that names a key not the run's own is
// refused before it is sent (exit 2).
func TestHammerSetupThatFailsStopsBeforeAnyLoad(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join("..", "testdata", "limiters", "semaphore_try_acquire.lua")
	base := []string{"--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--script", script, "--script-keys", "{key}",
		"--script-args", "{cost}", "--script-allowed", "reply == 1", "--script-release", "INCRBY {key} {cost}", "--duration", "1s"}
	r := run(t, append(base, "--script-setup", "SET {key} {limit} NX", "--script-setup", "HSET {key}:config rate")...).wantExit(t, ExitError)
	lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "limitctl: --script-setup 'HSET {key}:config rate' on limitctl:{") || !strings.Contains(last, "wrong number of arguments") {
		t.Errorf("the error does not name the step, the key and Redis's reply:\n%s", r.errOut)
	}
	wantNoKeys(t, srv)
	if calls := commandCalls(t, srv, "evalsha") + commandCalls(t, srv, "eval"); calls != 0 {
		t.Errorf("%d script calls: a decision was sent after a failed set-up", calls)
	}
	r = run(t, append(base, "--script-setup", "SET users:1 {key}")...).wantExit(t, ExitUsage)
	if !strings.Contains(r.errOut, "limitctl: --script-setup 'SET users:1 {key}' writes users:1, which is not one of the run's keys") {
		t.Errorf("a set-up naming a key of the user's:\n%s", r.errOut)
	}
	if n, err := srv.Client(t).Exists(context.Background(), "users:1").Result(); err != nil || n != 0 {
		t.Errorf("users:1 exists (%d, %v): a set-up wrote a key of the user's", n, err)
	}
}

// commandCalls is how many times the server ran cmd, from INFO commandstats.
func commandCalls(t *testing.T, srv *redistest.Server, cmd string) int64 {
	t.Helper()
	info, err := srv.Client(t).Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.ParseInt(strings.SplitN(rest, ",", 2)[0], 10, 64)
			return n
		}
	}
	return 0
}

// What each set-up flag accepts is checked before anything connects: exit 2, naming the flag
// and the column (the target does not exist, so a mistake that slipped through would exit 1).
func TestHammerSetupErrorsAreUsageErrors(t *testing.T) {
	closed := "127.0.0.1:" + itoa(redistest.FreePort(t))
	script := filepath.Join("..", "testdata", "limiters", "semaphore_try_acquire.lua")
	setupFile := filepath.Join("..", "testdata", "limiters", "semaphore_try_set_permits.lua")
	base := []string{"--addr", closed, "hammer", "--limiter", "concurrency", "--script", script}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown placeholder", []string{"--script-setup", "SET {key} {limt} NX"}, []string{"--script-setup: column 11: unknown placeholder {limt}"}},
		{"no key of the run", []string{"--script-setup", "SET permits {limit}"}, []string{"--script-setup: names no key of the run"}},
		{"a request's placeholder", []string{"--script-setup", "SET {key} {member}"}, []string{"--script-setup: {member} belongs to a request"}},
		{"setup file without its comma", []string{"--script-setup-file", setupFile + " {key} {limit}"}, []string{"--script-setup-file: column ", "no ',' between the KEYS and the ARGV"}},
		{"setup file key not the run's", []string{"--script-setup-file", setupFile + " permits , {limit}"}, []string{"--script-setup-file: key 1 must contain {key}"}},
		{"setup file unknown placeholder", []string{"--script-setup-file", setupFile + " {key} , {limt}"}, []string{"--script-setup-file: column ", "unknown placeholder {limt}"}},
		{"unreadable setup file", []string{"--script-setup-file", "no-such.lua {key} ,"}, []string{"cannot read script no-such.lua"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, append(append([]string{}, base...), c.args...)...).wantExit(t, ExitUsage).wantOneLineError(t, c.want...)
		})
	}
	t.Run("setup without a script", func(t *testing.T) {
		run(t, "--addr", closed, "hammer", "--script-setup", "SET {key} 1").wantExit(t, ExitUsage).
			wantOneLineError(t, "--script-setup sets up a custom script's state: give --script FILE.lua")
	})
}

// The two set-up flags make one list in the order given, whichever flag each step came by, and
// an empty --script-keys is no KEYS rather than the shipped ones (no server: runF stands in).
func TestHammerSetupFlagsKeepTheirOrder(t *testing.T) {
	streams, _, _, errOut := TestStreams()
	f := NewFactory(streams, Build{Version: "test"})
	f.Getenv = func(string) string { return "" }
	var got *hammerOptions
	root := NewRootCmd(f)
	for _, c := range root.Commands() {
		if c.Name() == "hammer" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(newHammerCmd(f, func(_ context.Context, _ *Factory, o *hammerOptions) error { got = o; return nil }))
	dir := filepath.Join("..", "testdata", "limiters")
	code := runRoot(context.Background(), f, root, []string{"hammer", "--limiter", "fixed-window", "--script", filepath.Join(dir, "bottleneck_register.lua"),
		"--script-setup", "SET {key}:a 1", "--script-setup-file", filepath.Join(dir, "bottleneck_init.lua") + " {key}:settings , {now_ms}",
		"--script-setup", "SET {key}:b 2", "--script-keys", ""})
	if code != ExitOK || got == nil {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	c := got.run.Contract
	if c == nil || len(c.Setup) != 3 {
		t.Fatalf("contract %+v, want three set-up steps", c)
	}
	var order []string
	for _, s := range c.Setup {
		order = append(order, s.String())
	}
	if !strings.HasPrefix(order[0], "--script-setup 'SET {key}:a") || !strings.HasPrefix(order[1], "--script-setup-file '") ||
		!strings.HasPrefix(order[2], "--script-setup 'SET {key}:b") || c.Setup[1].Source == "" {
		t.Errorf("steps %q (the file's source read: %v), want a, the file, b", order, c.Setup[1].Source != "")
	}
	if c.Keys.Len() != 0 || c.Spec.Keys != " " {
		t.Errorf("--script-keys '': %d keys (%q), want none", c.Keys.Len(), c.Spec.Keys)
	}
}
