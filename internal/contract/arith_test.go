package contract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The clocks libraries pass that SPEC section 7 could not express: whole seconds (go-zero's
// now.Unix(), OpenResty's ngx.time(), PHP's time()), nanoseconds (sethvargo/go-redisstore), and
// a window in micro- or nanoseconds (Traefik's token bucket).
func TestTemplateExpandsTheThirdReleasesPlaceholders(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"{now_ns}", []string{itoa(testNow.UnixNano())}},
		{"{now_s_int}", []string{itoa(testNow.Unix())}},
		{"{window_us} {window_ns}", []string{"1500000", "1500000000"}},
	}
	for _, c := range cases {
		if got := expand(t, c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q expanded to %q, want %q", c.text, got, c.want)
		}
	}
	before := time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC) // half a second before the epoch
	tpl, _ := Parse(FlagArgs, "{now_s_int}")
	if got := mustBindTemplate(t, tpl, testStatic).AppendStrings(nil, &Call{Now: before}); got[0] != "-1" {
		t.Errorf("whole seconds round down, before the epoch too: %s", got[0])
	}
}

// Arithmetic inside one placeholder is evaluated per call: integers stay exact (the nanosecond
// clock needs every bit), a division that does not come out whole is a decimal, never an
// exponent a script's tonumber might not read.
func TestTemplateArithmetic(t *testing.T) {
	ms := testNow.UnixMilli()
	cases := []struct {
		text string
		want string
	}{
		{"{now_ms + window_ms}", itoa(ms + 1500)},
		{"{limit - 1}", "19"},
		{"{rate_per_s / 1000}", "0.0025"},
		{"{rate_per_s/1000000}", "0.0000025"},
		{"{limit * 2 + 1}", "41"},
		{"{limit * (2 + 1)}", "60"},
		{"{-limit + 1}", "-19"},
		{"{window_ms / 1000}", "1.5"},
		{"{window_ns / 1000000}", "1500"},
		{"{now_ns + window_ns}", itoa(testNow.UnixNano() + 1_500_000_000)},
		{"{now_s_int + window_s}", "1796068801.5"},
		{"{ now_ms }", itoa(ms)},
		{"{key}:{window_index + 1}", "lc:{r}:custom:" + itoa(ms/1500+1)},
		{"{1 / 4}", "0.25"},
		{"{limit / 3}", "6.666666666666667"},
	}
	for _, c := range cases {
		if got := expand(t, c.text); len(got) != 1 || got[0] != c.want {
			t.Errorf("%q expanded to %q, want %q", c.text, got, c.want)
		}
	}
	// A per-call expression is computed again for every call, with the call's own time.
	tpl, _ := Parse(FlagArgs, "{now_ms + window_ms}")
	b := mustBindTemplate(t, tpl, testStatic)
	later := testNow.Add(7 * time.Millisecond)
	if got := b.AppendStrings(nil, &Call{Now: later}); got[0] != itoa(later.UnixMilli()+1500) {
		t.Errorf("second call: %s", got[0])
	}
}

func TestArithmeticErrorsNameTheFlagAndColumn(t *testing.T) {
	cases := []struct {
		text, want string
	}{
		{"{key} {now_ms + windw_ms}", "--script-args: column 17: unknown placeholder windw_ms"},
		{"{limit -}", "--script-args: column 9: the expression ends"},
		{"{limit - 1", "--script-args: column 1: unclosed {"},
		{"{(limit - 1}", "--script-args: column 2: unbalanced parenthesis"},
		{"{limit / 0}", "--script-args: column 8: division by zero"},
		{"{member + 1}", "--script-args: column 2: member is not a number"},
		{"{limit % 2}", "--script-args: column 8: unexpected \"%\""},
		{"{limit 2}", "--script-args: column 8: unexpected \"2\""},
		{"{1.2.3}", "--script-args: column 2: \"1.2.3\" is not a number"},
	}
	for _, c := range cases {
		_, err := Parse(FlagArgs, c.text)
		var te *Error
		if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an *Error starting %q", c.text, err, c.want)
		}
	}
	// A fixed value of zero is known only once the run's values are: Bind names the flag.
	tpl, err := Parse(FlagArgs, "{window_ms / limit}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Bind(Static{Limit: 0, Window: time.Second}); err == nil || !strings.Contains(err.Error(), "--script-args") {
		t.Errorf("dividing by --limit 0: %v", err)
	}
}

func TestArithmeticOverflowContinuesAsAFloat(t *testing.T) {
	if got := expand(t, "{now_ns * 1000}"); got[0] == "" || strings.HasPrefix(got[0], "-") {
		t.Errorf("now_ns * 1000 overflows int64; want a float, got %s", got[0])
	}
}

// The clock follows the templates, then what the script reads: a script that reads TIME and is
// passed no {now_*} runs on the virtual clock (the hammer answers its TIME), one that reads
// neither on the server's clock (its key expiry is its only clock).
func TestCompileClockDefaults(t *testing.T) {
	shipped := Spec{Keys: "{key}", Args: "{limit} {now_ms}"}
	for _, c := range []struct {
		spec Spec
		want Clock
	}{
		{Spec{}, ClientClock},
		{Spec{Args: "{limit}", ReadsTime: true}, VirtualClock},
		{Spec{Args: "{limit}"}, ServerClock},
		{Spec{Args: "{limit} {now_ns}", ReadsTime: true}, ClientClock},
		{Spec{Args: "{now_ms + window_ms}"}, ClientClock},
		{Spec{Args: "{limit}", ReadsTime: true, Clock: "server"}, ServerClock},
		{Spec{Args: "{limit}", Clock: "virtual"}, VirtualClock},
	} {
		ct, err := Compile(c.spec, shipped)
		if err != nil {
			t.Fatal(err)
		}
		if ct.Clock != c.want || ct.Spec.Clock != string(c.want) {
			t.Errorf("%+v: clock %s, want %s", c.spec, ct.Clock, c.want)
		}
	}
	if !VirtualClock.AnswersTime() || ServerClock.AnswersTime() || ClientClock.AnswersTime() {
		t.Error("only the virtual clock answers TIME")
	}
}

// SPEC section 8: a fixed window is epoch-aligned only when the contract says so; and a
// script told only whole seconds is judged at whole seconds.
func TestCompileAlignmentAndTimeQuantum(t *testing.T) {
	for _, c := range []struct {
		spec    Spec
		aligned bool
		quantum time.Duration
	}{
		{Spec{Keys: "{key}:{window_index}", Args: "{limit}"}, true, time.Millisecond},
		{Spec{Keys: "{key}", Args: "{limit} {prev_window_index}"}, true, time.Millisecond},
		{Spec{Keys: "{key}", Args: "{window_start_ms + window_ms}"}, true, time.Millisecond},
		{Spec{Keys: "{key}", Args: "{limit} {now_ns} {window_ns}"}, false, time.Millisecond},
		{Spec{Keys: "{key}", Args: "{limit} {now_s_int}"}, false, time.Second},
		{Spec{Keys: "{key}", Args: "{limit} {now_s_int + window_s}"}, false, time.Second},
		{Spec{Keys: "{key}", Args: "{now_s_int} {now_ms}"}, false, time.Millisecond},
	} {
		ct, err := Compile(c.spec, Spec{})
		if err != nil {
			t.Fatal(err)
		}
		if ct.EpochAligned() != c.aligned || ct.TimeQuantum() != c.quantum {
			t.Errorf("%+v: aligned %v quantum %s, want %v %s", c.spec, ct.EpochAligned(), ct.TimeQuantum(), c.aligned, c.quantum)
		}
	}
}

// A kind that weighs by the fraction of its window allows the coarsest now a script may take that
// fraction from: upstash's layout (the counters named by the window's index, the now in whole
// seconds) is judged at whole seconds, where TimeQuantum reads the index as a finer clock; a
// script given a finer now beside whole seconds may still use the seconds.
func TestFractionQuantumIsTheCoarsestNow(t *testing.T) {
	for _, c := range []struct {
		spec    Spec
		quantum time.Duration
	}{
		{Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: "{now_s_int} {window_s} {limit}"}, time.Second},
		{Spec{Keys: "{key}", Args: "{now_s_int} {now_ms}"}, time.Second},
		{Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: "{limit} {now_ms} {window_ms}"}, time.Millisecond},
		{Spec{Keys: "{key}", Args: "{limit}", Clock: string(ServerClock)}, time.Millisecond},
	} {
		ct, err := Compile(c.spec, Spec{})
		if err != nil {
			t.Fatal(err)
		}
		if got := ct.FractionQuantum(); got != c.quantum {
			t.Errorf("%+v: fraction quantum %s, want %s", c.spec, got, c.quantum)
		}
	}
}

// Given keeps what the user passed, so a template taken from the shipped contract can be told
// apart from the same text given on purpose.
func TestCompileKeepsWhatWasGiven(t *testing.T) {
	shipped := Spec{Keys: "{key}", Args: "{limit} {now_ms}"}
	ct, err := Compile(Spec{Args: "{limit} {now_ms}"}, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if ct.Given.Keys != "" || ct.Given.Args != "{limit} {now_ms}" || ct.Spec.Keys != "{key}" {
		t.Errorf("given %+v, spec %+v", ct.Given, ct.Spec)
	}
}

// A release that is a script of its own (--script-release-file) is called with its own KEYS
// and ARGV templates, where {reply} is the acquire's reply.
func TestReleaseScript(t *testing.T) {
	shipped := Spec{Keys: "{key}", Args: "{limit} {now_ms} {member}", Release: "ZREM {key} {member}"}
	ct, err := Compile(Spec{ReleaseFile: "release.lua", ReleaseScript: "return 1", ReleaseKeys: "{reply} {key}:holders", ReleaseArgs: "{member} {now_ms}"}, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if ct.Release != nil || !ct.ReleaseUsesReply() || !ct.UsesMember() {
		t.Fatalf("release %v, uses reply %v", ct.Release, ct.ReleaseUsesReply())
	}
	caller := mustBind(t, ct, testStatic)
	keys, args, ok := caller.ReleaseScriptCall(&Call{Key: "k", Member: "m", Now: testNow, Reply: "k3"})
	if !ok || !reflect.DeepEqual(keys, []string{"k3", "k:holders"}) || !reflect.DeepEqual(args, []any{"m", itoa(testNow.UnixMilli())}) {
		t.Fatalf("release call %q %q %v", keys, args, ok)
	}
	if caller.ReleaseCommand(&Call{Key: "k"}) != nil {
		t.Error("a release script is not also a command")
	}
	def, err := Compile(Spec{ReleaseFile: "r.lua", ReleaseScript: "return 1"}, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if keys, args, _ := mustBind(t, def, testStatic).ReleaseScriptCall(&Call{Key: "k", Member: "m"}); !reflect.DeepEqual(keys, []string{"k"}) || !reflect.DeepEqual(args, []any{"m"}) {
		t.Errorf("default release script call %q %q", keys, args)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{ReleaseScript: "return 1", Release: "DEL {key}"}, "--script-release: give the release as a command or as --script-release-file"},
		{Spec{ReleaseKeys: "{key}"}, "--script-release-keys: describes the release script"},
		{Spec{ReleaseArgs: "{member}"}, "--script-release-args: describes the release script"},
		{Spec{ReleaseScript: "return 1", ReleaseKeys: "other"}, "--script-release-keys: key 1 must contain {key}"},
		{Spec{ReleaseScript: "return 1", ReleaseArgs: "{slot}"}, "--script-release-args: {slot} repeats"},
		{Spec{ReleaseScript: "return 1", ReleaseArgs: "{bogus}"}, "--script-release-args: column 1: unknown placeholder"},
	} {
		if _, err := Compile(c.spec, shipped); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Compile(%+v) = %v, want %q", c.spec, err, c.want)
		}
	}
}
