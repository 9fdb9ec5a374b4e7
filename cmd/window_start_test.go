package cmd

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// --window-start is part of a custom fixed window's contract: a value it cannot take, a kind
// without windows that start, no script, or first-hit beside a template that names windows by
// the epoch are usage errors, one line each, before anything connects.
func TestWindowStartIsCheckedBeforeTheRun(t *testing.T) {
	script := filepath.Join("..", "testdata", "limiters", "fixed_window_first_hit_ns.lua")
	contract := []string{"--script", script, "--script-keys", "{key}", "--script-args", "{now_ns} {limit} {window_ns}", "--script-allowed", "reply[4] == 1"}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"an unknown value", append([]string{"--limiter", "fixed-window", "--window-start", "aligned"}, contract...), []string{"--window-start", "any, first-hit or epoch"}},
		{"no script", []string{"--limiter", "fixed-window", "--window-start", "first-hit"}, []string{"--window-start", "--script"}},
		{"a sliding window", append([]string{"--limiter", "sliding-window", "--window-start", "epoch"}, contract...), []string{"--window-start", "fixed-window"}},
		{"first-hit beside {window_index}", []string{"--limiter", "fixed-window", "--window-start", "first-hit", "--script", script,
			"--script-keys", "{key}:{window_index}", "--script-args", "{now_ns} {limit} {window_ns}", "--script-allowed", "reply[4] == 1"}, []string{"--window-start", "epoch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, append([]string{"hammer", "--addr", "127.0.0.1:1"}, c.args...)...).wantExit(t, ExitUsage)
			r.wantOneLineError(t, c.want...)
		})
	}
}

// A first-hit window judged at the default (any) states its power, and what first-hit would
// prove; told first-hit, the JSON contract says so and no such hint is given.
func TestWindowStartShowsInTheContractAndThePower(t *testing.T) {
	skipInShortMode(t)
	srv := redistest.Start(t)
	args := []string{"--addr", srv.Addr, "hammer", "--limiter", "fixed-window", "--duration", "5s",
		"--script", filepath.Join("..", "testdata", "limiters", "fixed_window_first_hit_ns.lua"),
		"--script-keys", "{key}", "--script-args", "{now_ns} {limit} {window_ns}", "--script-allowed", "reply[4] == 1"}
	for _, start := range []string{"", "first-hit"} {
		a := args
		if start != "" {
			a = append(a, "--window-start", start)
		}
		r := run(t, append(a, "-o", "json")...)
		var doc struct {
			Strategies []struct {
				Verdict            string            `json:"verdict"`
				VerdictText        string            `json:"verdict_text"`
				CaughtFrom         *int64            `json:"caught_from"`
				CaughtFromFirstHit *int64            `json:"caught_from_first_hit"`
				Contract           map[string]string `json:"contract"`
			} `json:"strategies"`
		}
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil || len(doc.Strategies) != 1 {
			t.Fatalf("exit %d, not one strategy's JSON: %v\n%s\n%s", r.code, err, r.out, r.errOut)
		}
		st := doc.Strategies[0]
		want := start
		if want == "" {
			want = "any"
		}
		if st.Contract["window_start"] != want || st.Verdict == "OVERSHOOT" || st.Verdict == "TOO STRICT" {
			t.Fatalf("--window-start %q: contract %v, %s: %s", start, st.Contract, st.Verdict, st.VerdictText)
		}
		switch {
		case start == "first-hit" && st.CaughtFromFirstHit != nil:
			t.Errorf("first-hit: caught_from_first_hit %d, want null (the verdict is first-hit's own)", *st.CaughtFromFirstHit)
		case start == "" && st.CaughtFromFirstHit != nil && (st.CaughtFrom != nil && *st.CaughtFromFirstHit >= *st.CaughtFrom):
			t.Errorf("any: caught_from_first_hit %d not better than caught_from %d", *st.CaughtFromFirstHit, *st.CaughtFrom)
		}
		t.Logf("--window-start %q: %s: %s", start, st.Verdict, st.VerdictText)
	}
}
