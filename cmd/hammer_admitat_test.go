package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/redistest"
)

// A scheduler that answers when the caller may go (reserve_slots.lua, a reservation as
// x/time/rate's Reserve gives one) is judged on the times it answers: exact when correct, with
// its refusals (callers that would wait too long) reported as not judged and why, and caught
// OVERSHOOT with its emission interval halved.
func TestHammerScheduleAnsweringSlots(t *testing.T) {
	srv := redistest.Start(t)
	dir := filepath.Join("..", "testdata", "limiters")
	hammer := func(script string, extra ...string) result {
		return run(t, append([]string{"--addr", srv.Addr, "hammer", "--limiter", "token-bucket", "--limit", "10", "--window", "1s",
			"--workers", "16", "--duration", "3s", "--script", filepath.Join(dir, script), "--script-keys", "{key}",
			"--script-args", "{now_ms} {window_ms / limit} {limit} {window_ms}", "--script-allowed", "reply[1] == 1",
			"--script-admit-at", "reply[2]", "-o", "json"}, extra...)...)
	}
	r := hammer("reserve_slots.lua").wantExit(t, ExitOK)
	st := decodeCustom(t, r)
	if st.Verdict != "exact" || st.FalseRejects != nil || st.Errors != 0 || st.Admitted == 0 || st.Rejected == 0 {
		t.Errorf("correct schedule: %+v, want exact with admits, refusals and false_rejects null", st)
	}
	for _, want := range []string{"going at reply[2] (ms)", "refusals not judged: the limiter answers when the caller may go (--script-admit-at)"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
		}
	}
	if !strings.Contains(r.errOut, "judged by custom.overshoot==0 and custom.leaks==0 (") {
		t.Errorf("the checks implied are not overshoot and leaks alone (no false-reject check where refusals are not judged):\n%s", r.errOut)
	}
	wantNoKeys(t, srv)

	r = hammer(filepath.Join("buggy", "reserve_slots_half_interval.lua")).wantExit(t, ExitCheckFailed)
	if st := decodeCustom(t, r); st.Verdict != "OVERSHOOT" || st.Overshoot == 0 {
		t.Errorf("slots at twice the rate: %+v, want OVERSHOOT", st)
	}
	wantNoKeys(t, srv)
}

// --script-allowed may read the call's time: the same scheduler, its slot taken as an admit
// only when it is now (a caller that will not wait), is judged exact, and its refusals, each of
// which took a later slot, are not judged.
func TestHammerAllowedReadsTheCallsTime(t *testing.T) {
	srv := redistest.Start(t)
	r := run(t, "--addr", srv.Addr, "hammer", "--limiter", "token-bucket", "--limit", "10", "--window", "1s",
		"--workers", "4", "--duration", "2s", "--script", filepath.Join("..", "testdata", "limiters", "reserve_slots.lua"),
		"--script-keys", "{key}", "--script-args", "{now_ms} {window_ms / limit} {limit} {window_ms}",
		"--script-allowed", "reply[1] == 1 and reply[2] <= {now_ms}", "-o", "json").wantExit(t, ExitOK)
	st := decodeCustom(t, r)
	if st.Verdict != "exact" || st.FalseRejects != nil || st.Admitted == 0 || st.Rejected == 0 {
		t.Errorf("admitted when the slot is now: %+v, want exact with false_rejects null", st)
	}
	if !strings.Contains(r.errOut, "refusals not judged: --script-allowed reads the call's time") {
		t.Errorf("stderr does not say why refusals are not judged:\n%s", r.errOut)
	}
}

// What --script-admit-at accepts is checked before any load: exit 2, one line naming the flag
// (and the column where there is one). The target does not exist, so a mistake that slipped
// through would show as a connection failure (exit 1) instead.
func TestHammerAdmitAtErrorsAreUsageErrors(t *testing.T) {
	closed := "127.0.0.1:" + itoa(redistest.FreePort(t))
	script := filepath.Join("..", "testdata", "limiters", "reserve_slots.lua")
	base := []string{"--addr", closed, "hammer", "--limiter", "token-bucket", "--script", script}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"syntax", []string{"--script-admit-at", "reply[2] +"}, []string{"--script-admit-at:", "syntax error"}},
		{"syntax with a column", []string{"--script-admit-at", "reply[2] = 1"}, []string{"--script-admit-at: column 10: syntax error"}},
		{"unknown placeholder", []string{"--script-admit-at", "reply[2] + {windw_ms}"}, []string{"--script-admit-at: column 12: unknown placeholder {windw_ms}"}},
		{"a text placeholder", []string{"--script-admit-at", "{member}"}, []string{"--script-admit-at: column 1: {member} is text"}},
		{"a decision, not a time", []string{"--script-admit-at", "reply[1] == 1"}, []string{"--script-admit-at: column 1: gives a boolean, not a time in milliseconds"}},
		{"a string, not a number", []string{"--script-admit-at", "tostring(reply[2])"}, []string{"--script-admit-at: column 1: gives a string", "tonumber"}},
		{"empty", []string{"--script-admit-at", " "}, []string{"--script-admit-at: empty expression"}},
		{"with skew", []string{"--script-admit-at", "reply[2]", "--skew", "5ms"}, []string{"--skew applies only without --script-admit-at"}},
		{"without a script", []string{"--script", "", "--script-admit-at", "reply[2]"}, []string{"--script-admit-at describes a custom script"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, append(append([]string{}, base...), c.args...)...).wantExit(t, ExitUsage).wantOneLineError(t, c.want...)
		})
	}
	t.Run("concurrency", func(t *testing.T) {
		run(t, "--addr", closed, "hammer", "--limiter", "concurrency", "--script", filepath.Join("..", "testdata", "limiters", "concurrency_slots.lua"),
			"--script-admit-at", "reply").wantExit(t, ExitUsage).wantOneLineError(t, "--script-admit-at applies only to")
	})
}
