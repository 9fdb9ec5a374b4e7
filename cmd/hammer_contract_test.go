package cmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A contract the user mistyped stops the run before any load: exit 2, one line naming the
// flag and the column. The target does not exist, so a mistake that slipped through
// validation would show as a connection failure (exit 1) instead.
func TestHammerContractErrorsAreUsageErrors(t *testing.T) {
	closed := "127.0.0.1:" + itoa(redistest.FreePort(t))
	script := filepath.Join("..", "testdata", "limiters", "moving_window_list.lua")
	base := []string{"--addr", closed, "hammer", "--limiter", "sliding-window", "--script", script}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown placeholder", []string{"--script-args", "{now_s} {limit} {windw_s}"}, []string{"--script-args: column 17: unknown placeholder {windw_s}"}},
		{"unbalanced quote", []string{"--script-keys", `{key} "{key}:x`}, []string{"--script-keys: column 7: unbalanced double quote"}},
		{"key not the run's own", []string{"--script-keys", "users:42"}, []string{"--script-keys: key 1 must contain {key}"}},
		{"expression syntax", []string{"--script-allowed", "reply ~= false and"}, []string{"--script-allowed:", "syntax error"}},
		{"expression syntax with a column", []string{"--script-allowed", "reply = 1"}, []string{"--script-allowed: column 7: syntax error"}},
		{"release on a window", []string{"--script-release", "none"}, []string{"--script-release applies only to the concurrency limiter"}},
		{"unknown clock", []string{"--clock", "wall"}, []string{`--clock: want client, server or virtual, got "wall"`}},
		{"unknown profile", []string{"--profile", "spiky"}, []string{"--profile must be steady or bursty"}},
		{"negative skew", []string{"--skew", "-1ms"}, []string{"--skew must be 0 up to 1m"}},
		{"arithmetic typo", []string{"--script-args", "{now_ms + windw_ms}"}, []string{"--script-args: column 11: unknown placeholder windw_ms"}},
		{"release script on a window", []string{"--script-release-file", script}, []string{"--script-release-file applies only to the concurrency limiter"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run(t, append(append([]string{}, base...), c.args...)...).wantExit(t, ExitUsage).wantOneLineError(t, c.want...)
		})
	}
	conc := []string{"--addr", closed, "hammer", "--limiter", "concurrency", "--script", filepath.Join("..", "testdata", "limiters", "concurrency_slots.lua")}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"release keys without the file", []string{"--script-release-keys", "{reply}"}, []string{"--script-release-keys: describes the release script: give --script-release-file F.lua"}},
		{"release command and file", []string{"--script-release", "none", "--script-release-file", script}, []string{"--script-release: give the release as a command or as --script-release-file, not both"}},
		{"release key not the run's own", []string{"--script-release-file", script, "--script-release-keys", "other"}, []string{"--script-release-keys: key 1 must contain {key}"}},
		{"unreadable release file", []string{"--script-release-file", "no-such.lua"}, []string{"cannot read script no-such.lua"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, append(append([]string{}, conc...), c.args...)...).wantExit(t, ExitUsage).wantOneLineError(t, c.want...)
		})
	}
	t.Run("contract flags without a script", func(t *testing.T) {
		run(t, "--addr", closed, "hammer", "--script-args", "{limit}").wantExit(t, ExitUsage).
			wantOneLineError(t, "--script-args describes a custom script: give --script FILE.lua")
	})
}

// The JSON says per strategy whose clock the evidence used and, for custom, the contract it ran.
func TestHammerJSONCarriesContractAndClock(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join("..", "testdata", "limiters", "fixed_window_first_hit.lua")
	r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--strategies", "lua,custom", "--script", script,
		"--script-keys", "{key}", "--script-args", "{cost} {window_s}", "--script-allowed", "reply[1] <= 20", "--duration", "1500ms",
		"--assert", "custom.overshoot==0", "-o", "json")
	var doc struct {
		SchemaVersion int     `json:"schema_version"`
		Profile       string  `json:"profile"`
		SkewMs        float64 `json:"skew_ms"`
		Strategies    []struct {
			Name     string            `json:"name"`
			Clock    string            `json:"clock"`
			Contract map[string]string `json:"contract"`
			Errors   int64             `json:"errors"`
			Verdict  string            `json:"verdict"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s", r.code, err, r.out)
	}
	// A window on the server's whole seconds, 1.5s long, is weakly judged: on a busy machine its
	// power may be no better than the limit (not judged, exit 3). That is the verdict's business;
	// this test reads the fields.
	if notJudged := len(doc.Strategies) == 2 && doc.Strategies[1].Verdict == "not judged"; r.code != ExitOK && !(notJudged && r.code == ExitCheckFailed) {
		t.Fatalf("exit %d, want 0 (or 3 when custom is not judged)\n%s\n%s", r.code, r.out, r.errOut)
	}
	if doc.SchemaVersion != 1 || doc.Profile != "bursty" || doc.SkewMs != 5 || len(doc.Strategies) != 2 { // a window limiter's default skew
		t.Fatalf("run fields: %+v", doc)
	}
	lua, custom := doc.Strategies[0], doc.Strategies[1]
	if lua.Clock != "client" || lua.Contract != nil {
		t.Errorf("lua: clock %q contract %v; want client and no contract", lua.Clock, lua.Contract)
	}
	// The contract is the limiter file's script as the run resolved it (limiterfile): the file, the
	// templates, the reply's rule, the clock, and where a fixed window's windows start (nothing in
	// these templates names a window, so any).
	want := map[string]string{"file": script, "keys": "{key}", "args": "{cost} {window_s}", "allowed": "reply[1] <= 20", "clock": "server", "window_start": "any"}
	if custom.Clock != "server" || len(custom.Contract) != len(want) || custom.Contract["keys"] != want["keys"] || custom.Contract["file"] != want["file"] ||
		custom.Contract["args"] != want["args"] || custom.Contract["allowed"] != want["allowed"] || custom.Contract["clock"] != want["clock"] ||
		custom.Contract["window_start"] != want["window_start"] || custom.Errors != 0 {
		t.Errorf("custom: clock %q contract %v errors %d; want server and %v", custom.Clock, custom.Contract, custom.Errors, want)
	}
}

// A script run without contract flags gets the limiter's shipped contract; one that does not
// fit it must not pass: the run fails (exit 3) and says what went wrong, on stderr and in JSON.
func TestHammerScriptThatDoesNotFitFailsWithSamples(t *testing.T) {
	srv := redistest.Start(t)
	// limits-style: ARGV timestamp, limit, expiry, amount; given the shipped limit, now_ms,
	// window_ms, member, its tonumber(amount) is nil and every call is a script error.
	script := filepath.Join("..", "testdata", "limiters", "moving_window_list.lua")
	r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "sliding-window", "--script", script, "--duration", "1s", "-o", "json").
		wantExit(t, ExitCheckFailed)
	if !strings.Contains(r.errOut, `attempt to compare number with nil`) {
		t.Errorf("stderr does not show the error sample:\n%s", r.errOut)
	}
	var doc struct {
		Passed     bool     `json:"passed"`
		Failures   []string `json:"failures"`
		Strategies []struct {
			Errors       int64 `json:"errors"`
			ErrorSamples []struct {
				Message string `json:"message"`
				Count   int64  `json:"count"`
			} `json:"error_samples"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	st := doc.Strategies[0]
	if len(doc.Failures) > 0 && !strings.Contains(doc.Failures[0], "decisions failed") {
		t.Errorf("failure %q does not say the decisions failed", doc.Failures[0])
	}
	if doc.Passed || len(doc.Failures) == 0 || st.Errors == 0 || len(st.ErrorSamples) == 0 ||
		!strings.Contains(st.ErrorSamples[0].Message, "attempt to compare number with nil") {
		t.Fatalf("passed %v failures %q errors %d samples %+v", doc.Passed, doc.Failures, st.Errors, st.ErrorSamples)
	}
}

// A reply --script-allowed cannot read is an error too, counted as kind reply.
func TestHammerUnreadableReplyFails(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join("..", "testdata", "limiters", "moving_window_list.lua")
	r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "sliding-window", "--script", script,
		"--script-args", "{now_s} {limit} {window_s} {cost}", "--duration", "1s", "-o", "json").wantExit(t, ExitCheckFailed)
	for _, want := range []string{`--script-allowed \"reply[1] == 1\" failed on a reply that is an integer`, "decisions failed"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.errOut)
		}
	}
	var doc struct {
		Strategies []struct {
			Errors       int64            `json:"errors"`
			ErrorsByKind map[string]int64 `json:"errors_by_kind"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if st := doc.Strategies[0]; st.Errors == 0 || st.ErrorsByKind["reply"] != st.Errors {
		t.Errorf("errors %d by kind %v, want all of kind reply", st.Errors, st.ErrorsByKind)
	}
}

// Every key a custom contract names comes from {key}, so the clean-up deletes them all: a
// second key (the backlog hash) and a suffixed set leave nothing behind.
func TestHammerCustomContractKeysAreCleanedUp(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join("..", "testdata", "limiters", "concurrency_deadlines.lua")
	run(t, "--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--script", script, "--requests", "300",
		"--script-keys", "{key}:in_progress {key}:backlog", "--script-args", "{member} {limit} {stale_after_s} {now_s}",
		"--script-allowed", "reply == 0", "--script-release", "ZREM {key}:in_progress {member}").wantExit(t, ExitOK)
	keys, err := srv.Client(t).Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Fatalf("keys left behind: %q", keys)
	}
}

// Verifying a limiter is why a script is hammered: with no --assert on custom's overshoot the run
// still fails (exit 3) when the script overshoots, and says which check failed and how to set
// another bound; a correct script passes, its JSON naming the implied check.
func TestHammerScriptOvershootFailsWithoutAssert(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	buggy := filepath.Join("..", "testdata", "limiters", "buggy", "fixed_window_off_by_one.lua")
	r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--script", buggy, "--duration", "3s").wantExit(t, ExitCheckFailed)
	for _, want := range []string{"judged by custom.overshoot==0", "assertion failed: custom.overshoot==0 (actual ", "--assert 'custom.overshoot<=N'"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
		}
	}

	correct := filepath.Join("..", "testdata", "limiters", "fixed_window_counter.lua")
	r = run(t, "--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--script", correct, "--script-keys", "{key}:{window_index}",
		"--script-args", "{limit} {window_ms} {cost}", "--script-allowed", "reply[1] <= reply[2]", "--duration", "1500ms", "-o", "json").wantExit(t, ExitOK)
	var doc struct {
		Assertions []struct {
			Expr    string `json:"expr"`
			Passed  bool   `json:"passed"`
			Implied bool   `json:"implied"`
		} `json:"assertions"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if len(doc.Assertions) != 3 || doc.Assertions[0].Expr != "custom.overshoot==0" || doc.Assertions[1].Expr != "custom.false_rejects==0" ||
		doc.Assertions[2].Expr != "custom.leaks==0" {
		t.Fatalf("assertions: %+v", doc.Assertions)
	}
	for _, a := range doc.Assertions {
		if !a.Passed || !a.Implied {
			t.Errorf("implied check %+v", a)
		}
	}

	// An assertion of the user's own on custom's overshoot replaces the implied one; the
	// false-reject check stays.
	r = run(t, "--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--script", buggy, "--duration", "1500ms",
		"--assert", "custom.overshoot<=1000", "-o", "json").wantExit(t, ExitOK)
	if strings.Contains(r.out, `"custom.overshoot==0"`) || !strings.Contains(r.out, `"custom.false_rejects==0"`) {
		t.Errorf("an explicit bound on overshoot:\n%s", r.out)
	}
}

// A script that refuses while it certainly has room fails without an --assert too: the verdict
// says TOO STRICT with its evidence, the implied custom.false_rejects==0 fails, and the JSON
// carries the evidence of the first wrong refusal.
func TestHammerTooStrictScriptFailsWithoutAssert(t *testing.T) {
	srv := redistest.Start(t)
	strict := filepath.Join("..", "testdata", "limiters", "strict", "concurrency_release_leaks.lua")
	r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--script", strict, "--duration", "1500ms", "-o", "json").wantExit(t, ExitCheckFailed)
	for _, want := range []string{"judged by custom.overshoot==0 and custom.false_rejects==0", "TOO STRICT", "of 20 were held, the first at",
		"assertion failed: custom.false_rejects==0 (actual ", "--assert 'custom.false_rejects<=N'"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
		}
	}
	var doc struct {
		Strategies []struct {
			Verdict          string `json:"verdict"`
			FalseRejects     *int64 `json:"false_rejects"`
			FirstFalseReject *struct {
				SentMs         float64  `json:"sent_ms"`
				RepliedMs      float64  `json:"replied_ms"`
				StampMs        *float64 `json:"stamp_ms"`
				HeldOrAdmitted *int64   `json:"held_or_admitted"`
				Limit          int64    `json:"limit"`
			} `json:"first_false_reject"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	st := doc.Strategies[0]
	f := st.FirstFalseReject
	if st.Verdict != "TOO STRICT" || st.FalseRejects == nil || *st.FalseRejects == 0 || f == nil {
		t.Fatalf("verdict %q, false rejects %v, first %+v", st.Verdict, st.FalseRejects, f)
	}
	if f.HeldOrAdmitted == nil || *f.HeldOrAdmitted >= 20 || f.Limit != 20 || f.StampMs == nil || f.SentMs > f.RepliedMs || f.SentMs <= 0 {
		t.Errorf("evidence %+v", f)
	}
}

// A Laravel-style limiter keeps one key per slot and releases the slot its acquire answered:
// {slot} gives the limit's number of keys, {reply} the slot to release. Released by its own
// name, each slot is taken again and again (a slot never released would stay held for
// --stale-after, 10s, so 1.5s would admit no more than the limit); one key too many in the
// contract is one slot too many, which the witness proves as overshoot.
func TestHammerSlotKeysReleaseTheSlotTaken(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join("..", "testdata", "limiters", "concurrency_slots.lua")
	release := `EVAL "if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) end return 0" 1 {reply} {member}`
	hammer := func(keys string, code int) result {
		return run(t, "--addr", srv.Addr, "hammer", "--limiter", "concurrency", "--limit", "5", "--workers", "16", "--script", script,
			"--script-keys", keys, "--script-args", "{key} {stale_after_s} {member}", "--script-allowed", "reply ~= false",
			"--script-release", release, "--duration", "1500ms", "-o", "json").wantExit(t, code)
	}
	var doc struct {
		Strategies []struct {
			Admitted      int64 `json:"admitted"`
			ReleaseErrors int64 `json:"release_errors"`
			Overshoot     int64 `json:"overshoot"`
		} `json:"strategies"`
	}
	r := hammer("{key}{slot}", ExitOK)
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if st := doc.Strategies[0]; st.Admitted < 50 || st.ReleaseErrors != 0 {
		t.Errorf("release by reply: admitted %d release errors %d; the slots were not freed", st.Admitted, st.ReleaseErrors)
	}
	// The sixth key is named as the script answers its slot ({key}6), so it is released and taken
	// again all run long like the others: six held at once happens again and again, not once.
	r = hammer("{key}{slot} {key}6", ExitCheckFailed)
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if doc.Strategies[0].Overshoot != 1 {
		t.Errorf("a sixth slot: overshoot %d, want 1", doc.Strategies[0].Overshoot)
	}
}

// --redis URL is --url by another name (what users of redis-cli-like tools try first); the
// alias stays out of --help.
func TestRedisIsAnAliasOfURL(t *testing.T) {
	srv := redistest.Start(t)
	r := run(t, "--redis", srv.URL(), "inspect", "-o", "json").wantExit(t, ExitOK)
	if !strings.Contains(r.out, `"scanned"`) {
		t.Errorf("inspect over --redis:\n%s", r.out)
	}
	if h := run(t, "hammer", "--help").wantExit(t, ExitOK); strings.Contains(h.out, "--redis") {
		t.Errorf("--redis shows in help")
	}
}

// A script that reads TIME and is given no time runs on the virtual clock: the JSON and the
// summary say the hammer answered its TIME, and one token too many per burst is proven (exit 3)
// where the server's clock could not prove it.
func TestHammerVirtualClockIsSaidAndSharp(t *testing.T) {
	srv := redistest.Start(t)
	script := filepath.Join("..", "testdata", "limiters", "buggy", "gcra_server_time_one_too_many.lua")
	// The one token too many shows in a burst's first milliseconds, which a stalled run on a
	// busy machine can miss: 4s runs until it is caught (at most 5); every run must say its clock.
	var r result
	for attempt := 1; ; attempt++ {
		r = run(t, "--addr", srv.Addr, "hammer", "--limiter", "token-bucket", "--script", script,
			"--script-args", "{burst} {limit} {window_s} {cost}", "--script-allowed", "reply[1] > 0", "--duration", "4s", "-o", "json")
		var doc struct {
			Strategies []struct {
				Clock        string `json:"clock"`
				TimeAnswered bool   `json:"time_answered"`
				Overshoot    int64  `json:"overshoot"`
			} `json:"strategies"`
		}
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil || len(doc.Strategies) != 1 {
			t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.out, r.errOut)
		}
		st := doc.Strategies[0]
		if st.Clock != "virtual" || !st.TimeAnswered {
			t.Fatalf("clock %q time answered %v; want virtual, true", st.Clock, st.TimeAnswered)
		}
		if st.Overshoot >= 1 {
			r.wantExit(t, ExitCheckFailed)
			break
		}
		if r.code != ExitOK || attempt == 5 {
			t.Fatalf("run %d: exit %d, overshoot %d; want the one token too many caught (exit 3)\n%s", attempt, r.code, st.Overshoot, r.errOut)
		}
	}
	for _, want := range []string{"clock virtual (the hammer answers the script's TIME", "custom: clock virtual: the hammer answered the script's TIME"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.errOut)
		}
	}
	if strings.Contains(r.errOut, "nondeterministic") {
		t.Errorf("a TIME the hammer answers is no lint finding:\n%s", r.errOut)
	}
	// The marks that kept each key's TIME from going back went with the run's clean-up.
	if keys, err := srv.Client(t).Keys(context.Background(), "*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("left behind: %v %v", keys, err)
	}
}
