package contract

import (
	"strings"
	"testing"
	"time"
)

// An admit-at expression reads a time in ms from the reply, as a number or through tonumber,
// to the microsecond, and may add the call's own time to a wait the reply gives.
func TestAdmitAtReadsTheTime(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	for _, tc := range []struct {
		expr  string
		reply any
		want  time.Time
	}{
		{"reply", int64(1_700_000_000_250), time.UnixMilli(1_700_000_000_250)},
		{"tonumber(reply[2])", []any{int64(1), "1700000000123.5"}, time.UnixMicro(1_700_000_000_123_500)},
		{"{now_ms} + reply[2]", []any{int64(1), int64(40)}, now.Add(40 * time.Millisecond)},
		{"reply[2] + {window_ms}", []any{int64(1), int64(1_700_000_000_000)}, now.Add(time.Second)},
	} {
		c, err := Compile(Spec{Keys: "{key}", Args: "{now_ms}", AdmitAt: tc.expr}, Spec{})
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		caller := mustBind(t, c, Static{Limit: 10, Window: time.Second})
		got, ok, err := caller.AdmitAt(tc.reply, &Call{Now: now})
		if err != nil || !ok || !got.Equal(tc.want) {
			t.Errorf("%q on %v = %v, %v, %v; want %v", tc.expr, tc.reply, got, ok, err, tc.want)
		}
		if c.Spec.Allowed != "true" {
			t.Errorf("%q: --script-allowed defaults to %q with a schedule, want true", tc.expr, c.Spec.Allowed)
		}
	}
	c, err := Compile(Spec{Keys: "{key}", AdmitAt: "reply[2]"}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	caller := mustBind(t, c, Static{Limit: 10, Window: time.Second})
	for _, reply := range []any{[]any{int64(1), "1700000000000"}, []any{int64(1)}, "soon"} {
		if _, _, err := caller.AdmitAt(reply, &Call{Now: now}); err == nil || !strings.Contains(err.Error(), "--script-admit-at") {
			t.Errorf("on %v: %v, want an error naming the flag", reply, err)
		}
	}
	if _, _, err := caller.AdmitAt([]any{int64(1), "1700000000000"}, &Call{Now: now}); err == nil || !strings.Contains(err.Error(), "tonumber") {
		t.Errorf("a numeric string: %v, want the tonumber fix", err)
	}
	plain, err := Compile(Spec{Keys: "{key}"}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := mustBind(t, plain, Static{Limit: 10}).AdmitAt(int64(1), &Call{Now: now}); ok || err != nil {
		t.Errorf("without the flag: ok %v, %v; want no time", ok, err)
	}
}

// --script-allowed may read the call's time, evaluated per call; a text placeholder still has
// no number to give.
func TestAllowedReadsTheCallsTime(t *testing.T) {
	c, err := Compile(Spec{Keys: "{key}", Allowed: "reply <= {now_ms}"}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Allowed.PerCall() {
		t.Error("{now_ms} is not read per call")
	}
	caller := mustBind(t, c, Static{Limit: 10, Window: time.Second})
	for _, tc := range []struct {
		reply int64
		want  bool
	}{{999, true}, {1000, true}, {1001, false}} {
		got, err := caller.Allowed(tc.reply, &Call{Now: time.UnixMilli(1000)})
		if err != nil || got != tc.want {
			t.Errorf("%d at now 1000 = %v, %v; want %v", tc.reply, got, err, tc.want)
		}
	}
	if _, err := CompileAllowed(FlagAllowed, "reply == {member}"); err == nil || !strings.Contains(err.Error(), "column 10") {
		t.Errorf("{member}: %v", err)
	}
}

// Refusals prove nothing under a schedule or an expression that reads the call's time; they
// are judged under one that reads only the run's fixed values.
func TestRefusalsUnjudgedBySpec(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{AdmitAt: "reply[2]"}, FlagAdmitAt},
		{Spec{Allowed: "reply[2] <= {now_ms}"}, "reads the call's time"},
		{Spec{Allowed: "reply[1] <= {limit}"}, ""},
		{Spec{}, ""},
	} {
		got := tc.spec.RefusalsUnjudged()
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.spec, got, tc.want)
		}
	}
}

// An expression that cannot read a time is refused before any load, naming the flag and column.
func TestAdmitAtCompileErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"reply[2] = 1":      "--script-admit-at: column 10: syntax error",
		"reply + {nwo_ms}":  "--script-admit-at: column 9: unknown placeholder {nwo_ms}",
		"reply[1] == 1":     "--script-admit-at: column 1: gives a boolean",
		"tostring(reply)":   "tonumber",
		"{key}":             "--script-admit-at: column 1: {key} is text",
		"":                  "--script-admit-at: empty expression",
		"{reply}":           "{reply} is text",
		"reply[2] + {slot}": "column 12: {slot} is text",
	} {
		_, err := CompileAdmitAt(FlagAdmitAt, expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", expr, err, want)
		}
	}
	// One that errors on every sample cannot be told apart from one that reads a shape no sample
	// has: it is accepted, and a reply it cannot read is an error of the run.
	if _, err := CompileAdmitAt(FlagAdmitAt, "reply.at + 0"); err != nil {
		t.Errorf("a shape the samples lack: %v", err)
	}
}
