package contract

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var testStatic = Static{Limit: 20, Burst: 20, Cost: 1, RatePerS: 2.5, Window: 1500 * time.Millisecond, StaleAfter: 10 * time.Second}

// 2026-11-30T20:00:00.123456Z
var testNow = time.Date(2026, 11, 30, 20, 0, 0, 123456789, time.UTC)

func expand(t *testing.T, text string) []string {
	t.Helper()
	tpl, err := Parse(FlagArgs, text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return mustBindTemplate(t, tpl, testStatic).AppendStrings(nil, &Call{Key: "lc:{r}:custom", Member: "m-1", Now: testNow})
}

func TestTemplateExpandsEveryPlaceholder(t *testing.T) {
	ms := testNow.UnixMilli()
	idx := ms / 1500
	cases := []struct {
		text string
		want []string
	}{
		{"{key} {member}", []string{"lc:{r}:custom", "m-1"}},
		{"{limit} {burst} {cost} {rate_per_s}", []string{"20", "20", "1", "2.5"}},
		{"{window_ms} {window_s} {stale_after_ms} {stale_after_s}", []string{"1500", "1.5", "10000", "10"}},
		{"{now_ms} {now_us} {now_s}", []string{itoa(ms), itoa(testNow.UnixMicro()), itoa(testNow.Unix()) + ".123456"}},
		{"{window_index} {prev_window_index} {window_start_ms}", []string{itoa(idx), itoa(idx - 1), itoa(idx * 1500)}},
		{"{key}:{window_index}", []string{"lc:{r}:custom:" + itoa(idx)}},
		{`"" a "b c" "{limit} x"`, []string{"", "a", "b c", "20 x"}},
		{`"say \"hi\"" {{literal}} x}}`, []string{`say "hi"`, "{literal}", "x}"}},
		{"  spaced\tout  ", []string{"spaced", "out"}},
		{"", nil},
	}
	for _, c := range cases {
		if got := expand(t, c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q expanded to %q, want %q", c.text, got, c.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustBindTemplate(t testing.TB, tpl *Template, s Static) *Bound {
	t.Helper()
	b, err := tpl.Bind(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustBind(t testing.TB, c *Contract, s Static) *Caller {
	t.Helper()
	b, err := c.Bind(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTemplateErrorsNameTheFlagAndColumn(t *testing.T) {
	cases := []struct {
		text, want string
	}{
		{"{key} {nowms}", "--script-args: column 7: unknown placeholder {nowms}"},
		{`{key} "abc`, "--script-args: column 7: unbalanced double quote"},
		{"{key} {limit", "--script-args: column 7: unclosed {"},
		{"{}", "--script-args: column 1: unknown placeholder {}"},
	}
	for _, c := range cases {
		_, err := Parse(FlagArgs, c.text)
		var te *Error
		if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an *Error starting %q", c.text, err, c.want)
		}
	}
}

func TestNowSIsExactForNegativeFractionFreeTimes(t *testing.T) {
	got := expand(t, "{now_s}")
	if got[0] != itoa(testNow.Unix())+".123456" {
		t.Fatalf("now_s = %s", got[0])
	}
	tpl, _ := Parse(FlagArgs, "{now_s}")
	whole := time.Unix(1700000000, 5000) // 5µs past a whole second: the zero padding matters
	if got := mustBindTemplate(t, tpl, testStatic).AppendStrings(nil, &Call{Now: whole}); got[0] != "1700000000.000005" {
		t.Fatalf("now_s = %s, want 1700000000.000005", got[0])
	}
}

func TestCompileDefaultsAndClock(t *testing.T) {
	shipped := Spec{Keys: "{key}", Args: "{limit} {now_ms} {stale_after_ms} {member}", Release: "ZREM {key} {member}"}
	c, err := Compile(Spec{}, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if c.Clock != ClientClock || c.Spec.Allowed != DefaultAllowed || c.Release == nil || !c.UsesMember() {
		t.Fatalf("defaults: clock %s allowed %q release %v member %v", c.Clock, c.Spec.Allowed, c.Release, c.UsesMember())
	}
	c, err = Compile(Spec{Args: "{burst} {rate_per_s} 1 {cost}", Release: "none"}, shipped)
	if err != nil {
		t.Fatal(err)
	}
	if c.Clock != ServerClock || c.Release != nil || c.Spec.Clock != "server" {
		t.Fatalf("a script given no time reads TIME itself: clock %s, release %v", c.Clock, c.Release)
	}
	c, err = Compile(Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: "{limit}"}, shipped)
	if err != nil || c.Clock != ClientClock {
		t.Fatalf("a window index comes from the client's clock: %v %v", c, err)
	}
	c, _ = Compile(Spec{Clock: "server"}, shipped)
	if c.Clock != ServerClock {
		t.Fatal("--clock server is honoured")
	}
	caller := mustBind(t, c, testStatic)
	call := &Call{Key: "k", Member: "m", Now: testNow}
	keys, args := caller.Expand(call)
	if !reflect.DeepEqual(keys, []string{"k"}) || !reflect.DeepEqual(args, []any{"20", itoa(testNow.UnixMilli()), "10000", "m"}) {
		t.Fatalf("Expand = %q %q", keys, args)
	}
	if rel := caller.ReleaseCommand(call); !reflect.DeepEqual(rel, []any{"ZREM", "k", "m"}) {
		t.Fatalf("release = %q", rel)
	}
}

func TestCompileRefusals(t *testing.T) {
	shipped := Spec{Keys: "{key}", Args: "{limit}"}
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Keys: "user:42"}, "--script-keys: key 1 must contain {key}"},
		{Spec{Args: "{limt}"}, "--script-args: column 1: unknown placeholder {limt}"},
		{Spec{Allowed: "reply[1] =="}, "--script-allowed: syntax error"},
		{Spec{Allowed: "reply[1] = 1"}, "--script-allowed: column 10: syntax error"},
		{Spec{Release: "{key} {member}"}, "--script-release: column 1: the first word must be a command name"},
		{Spec{Clock: "wall"}, `--clock: want client, server or virtual, got "wall"`},
	}
	for _, c := range cases {
		_, err := Compile(c.spec, shipped)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Compile(%+v) = %v, want %q", c.spec, err, c.want)
		}
	}
	if c, err := Compile(Spec{Keys: " "}, shipped); err != nil || c.Keys.Len() != 0 {
		t.Errorf("--script-keys '' is a script called with no KEYS, not the shipped ones: %v", err)
	}
	if _, err := Compile(Spec{Keys: `{key} "" {key}:backlog`}, shipped); err != nil {
		t.Errorf("an empty key and a suffixed key are the run's own: %v", err)
	}
}

func TestAllowedConvertsRepliesAsRedisDoes(t *testing.T) {
	cases := []struct {
		expr  string
		reply any
		want  bool
	}{
		{DefaultAllowed, []any{int64(1), int64(5)}, true},
		{DefaultAllowed, []any{int64(0), int64(5)}, false},
		{"reply[1] > 0", []any{int64(3)}, true},
		{"reply == 0", int64(0), true},
		{"reply ~= false", int64(1), true},
		{"reply ~= false", nil, false},          // Lua false reaches a RESP2 client as nil
		{"reply[1] == false", []any{nil}, true}, // a nil inside an array is false too
		{"reply[1] <= reply[2]", []any{int64(20), int64(20)}, true},
		{`reply[3] == "-1"`, []any{int64(1), int64(19), "-1", "0.05"}, true},
		{"tonumber(reply[4]) < 0.1", []any{int64(1), int64(19), "-1", "0.05"}, true},
		{"reply[2][1] == 'ok'", []any{int64(1), []any{"ok"}}, true},
		{"reply == 'OK'", "OK", true},
		{"reply.err ~= nil", redis.Nil, true},
		{"#reply == 0", []any{}, true},
	}
	for _, c := range cases {
		a, err := CompileAllowed(FlagAllowed, c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		got, err := a.Eval(c.reply)
		if err != nil || got != c.want {
			t.Errorf("%q over %#v = %v, %v; want %v", c.expr, c.reply, got, err, c.want)
		}
	}
}

func TestAllowedErrorsSayWhatTheReplyWas(t *testing.T) {
	a, _ := CompileAllowed(FlagAllowed, DefaultAllowed)
	_, err := a.Eval(int64(1)) // a limits-style script replies a bare 1, not an array
	if err == nil || !strings.Contains(err.Error(), "reply that is an integer") {
		t.Fatalf("indexing a number: %v", err)
	}
	n, _ := CompileAllowed(FlagAllowed, "reply[1]")
	_, err = n.Eval([]any{int64(0)})
	if err == nil || !strings.Contains(err.Error(), "gave a number, not true or false") {
		t.Fatalf("a number is not a verdict (0 is true in Lua): %v", err)
	}
	// The state survives an error: the next call on the same pool still works.
	if ok, err := a.Eval([]any{int64(1)}); !ok || err != nil {
		t.Fatalf("after an error: %v %v", ok, err)
	}
}

// A script that replies a number as a string (redis_rate's retry_after, any float) compared
// with a number fails in Lua: the message names tonumber(...) as the fix, with the element to read.
func TestAllowedComparingAStringNamesTonumber(t *testing.T) {
	a, _ := CompileAllowed(FlagAllowed, "reply[3] < 1")
	_, err := a.Eval([]any{int64(1), int64(19), "-1", "0.05"})
	if err == nil || !strings.Contains(err.Error(), "attempt to compare") || !strings.Contains(err.Error(), "read it with tonumber(reply[3])") {
		t.Fatalf("got %v", err)
	}
	if i := strings.Index(err.Error(), "tonumber("); i < 0 || i > 120 {
		t.Errorf("the fix must come early: error samples keep 200 bytes of a message: %v", err)
	}
	bare, _ := CompileAllowed(FlagAllowed, "reply > 0")
	if _, err := bare.Eval("0.25"); err == nil || !strings.Contains(err.Error(), "tonumber(reply)") {
		t.Fatalf("a bare string reply: %v", err)
	}
	other, _ := CompileAllowed(FlagAllowed, "reply[1] == 1")
	if _, err := other.Eval(int64(1)); err == nil || strings.Contains(err.Error(), "tonumber") {
		t.Fatalf("no comparison with a string, no hint: %v", err)
	}
}

func TestAllowedSyntaxErrorPositionOnLaterLine(t *testing.T) {
	_, err := CompileAllowed(FlagAllowed, "reply[1] == 1 and\nreply[2] = 3")
	if err == nil || !strings.HasPrefix(err.Error(), "--script-allowed: column 28:") {
		t.Fatalf("got %v", err)
	}
}

// A count-returning limiter (express rate-limit-redis, ulule/limiter, limits' fixed window) is
// judged against the run's limit: --script-allowed 'reply[1] <= {limit}' must read {limit} as the
// run's value, not as a Lua table constructor, so the verdict follows --limit.
func TestAllowedTakesTheRunsStaticValues(t *testing.T) {
	c, err := Compile(Spec{Allowed: "reply[1] <= {limit} and reply[2] <= {window_ms}"}, Spec{Keys: "{key}", Args: "{cost} {window_ms}"})
	if err != nil {
		t.Fatal(err)
	}
	caller := mustBind(t, c, testStatic)
	for _, tc := range []struct {
		reply []any
		want  bool
	}{
		{[]any{int64(testStatic.Limit), int64(5)}, true},
		{[]any{testStatic.Limit + 1, int64(5)}, false},
		{[]any{int64(1), testStatic.Window.Milliseconds() + 1}, false},
	} {
		got, err := caller.Allowed(tc.reply, &Call{})
		if err != nil || got != tc.want {
			t.Errorf("over %v = %v, %v; want %v", tc.reply, got, err, tc.want)
		}
	}
	other := mustBind(t, c, Static{Limit: 3, Window: time.Second})
	if got, err := other.Allowed([]any{int64(4), int64(1)}, &Call{}); err != nil || got {
		t.Errorf("--limit 3: 4 is over it: %v %v", got, err)
	}
	for _, bad := range []string{"reply == {member}", "reply == {key}"} {
		_, err := CompileAllowed(FlagAllowed, bad)
		if err == nil || !strings.Contains(err.Error(), "column 10") || !strings.Contains(err.Error(), "changes from call to call") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// A syntax error after a placeholder still points at its column in the flag's value.
	if _, err := CompileAllowed(FlagAllowed, "reply[1] <= {limit} = 3"); err == nil || !strings.HasPrefix(err.Error(), "--script-allowed: column 21:") {
		t.Errorf("column after a placeholder: %v", err)
	}
}

// Laravel's concurrency limiter keeps one key per slot (name1 .. nameN, N the limit), answers
// the slot it took, and releases that slot by name: {slot} repeats a word once per slot, and
// {reply} passes the acquire's reply to the release.
func TestSlotKeysAndReleaseByReply(t *testing.T) {
	c, err := Compile(Spec{Keys: "{key}{slot}", Args: "{key} {stale_after_s} {member}", Allowed: "reply ~= false",
		Release: `EVAL "return redis.call('del', KEYS[1])" 1 {reply} {member}`}, Spec{Keys: "{key}", Args: "{limit}"})
	if err != nil {
		t.Fatal(err)
	}
	caller := mustBind(t, c, Static{Limit: 3, StaleAfter: 10 * time.Second, Window: time.Second})
	call := &Call{Key: "k", Member: "m", Now: testNow, Reply: "k2"}
	keys, args := caller.Expand(call)
	if !reflect.DeepEqual(keys, []string{"k1", "k2", "k3"}) || !reflect.DeepEqual(args, []any{"k", "10", "m"}) {
		t.Fatalf("Expand = %q %q", keys, args)
	}
	if rel := caller.ReleaseCommand(call); !reflect.DeepEqual(rel, []any{"EVAL", "return redis.call('del', KEYS[1])", "1", "k2", "m"}) {
		t.Fatalf("release = %q", rel)
	}
	for _, bad := range []Spec{{Keys: "{key}:{reply}"}, {Args: "{reply}"}, {Release: "DEL {key}{slot}"}} {
		if _, err := Compile(bad, Spec{Keys: "{key}", Args: "{limit}"}); err == nil {
			t.Errorf("%+v: want a usage error", bad)
		}
	}
	if got := ReplyText([]any{"k7", int64(1)}); got != "k7" {
		t.Errorf("ReplyText of an array = %q, want its first element", got)
	}
	if got := ReplyText(int64(12)); got != "12" {
		t.Errorf("ReplyText(12) = %q", got)
	}
}

// The clock's unit is what the script can tell apart: a now or a stale time passed only in
// seconds, or only as a window's index, is a clock of that unit; anything finer beside it is
// not. NowQuantum is what the now is floored to (a fraction of a second is no flooring).
func TestClockUnitAndNowQuantum(t *testing.T) {
	shipped := Spec{Keys: "{key}", Args: "{limit} {now_ms} {stale_after_ms} {member}", Release: "ZREM {key} {member}"}
	for _, c := range []struct {
		keys, args    string
		unit, quantum time.Duration
	}{
		{"{key}", "{limit} {now_ms} {stale_after_ms} {member}", 0, time.Millisecond},
		{"{key}", "{limit} {stale_after_s} {window_index} {member}", 2 * time.Second, 2 * time.Second}, // APISIX's style, window 2s
		{"{key}", "{limit} {stale_after_ms} {now_s_int} {member}", time.Second, time.Second},
		{"{key}", "{member} {limit} {stale_after_s} {now_s}", time.Second, time.Millisecond},                   // sidekiq-throttled's
		{"{key}", "{limit} {stale_after_ms} {now_s_int} {now_ms} {member}", 0, time.Millisecond},               // finer beside it
		{"{key}:{window_index}", "{limit} {stale_after_ms} {now_ms + 1} {member}", 0, time.Millisecond},        // arithmetic counts
		{"{key}", "{limit} {stale_after_s} {member}", time.Second, time.Millisecond},                           // TIME read by the script
		{"{key}", "{limit} {stale_after_ms} {window_start_ms} {now_s_int} {member}", time.Second, time.Second}, // the finest it is told
	} {
		ct, err := Compile(Spec{Keys: c.keys, Args: c.args}, shipped)
		if err != nil {
			t.Fatal(err)
		}
		if got := ct.ClockUnit(2 * time.Second); got != c.unit {
			t.Errorf("%s / %s: ClockUnit %s, want %s", c.keys, c.args, got, c.unit)
		}
		if got := ct.NowQuantum(2 * time.Second); got != c.quantum {
			t.Errorf("%s / %s: NowQuantum %s, want %s", c.keys, c.args, got, c.quantum)
		}
	}
}
