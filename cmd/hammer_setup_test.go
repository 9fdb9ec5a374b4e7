package cmd

import (
	"context"
	"encoding/json"
	"path/filepath"
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
