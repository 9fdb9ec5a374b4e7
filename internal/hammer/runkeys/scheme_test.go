package runkeys

import (
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/limiter"
)

func TestSchemeOwnsExactlyItsKeys(t *testing.T) {
	one := Scheme{Prefix: "rl", RunID: "user", Limiter: limiter.FixedWindow, Keys: 1, Strategies: []string{"lua", "lua-ts-member"}}
	many := Scheme{Prefix: "rl", RunID: "user", Limiter: limiter.FixedWindow, Keys: 3, Strategies: []string{"lua"}}
	for _, key := range []string{one.Key("lua", 0), one.Key("lua-ts-member", 0), one.Witness(one.Key("lua", 0)),
		one.Key("lua", 0) + ":1700000000000", one.Probe("lua"), one.Probe("lua") + ":1700000000000", one.Probe("witness"),
		one.Probe("cleanup"), many.Key("lua", 0), many.Key("lua", 2) + ":witness", many.Probe("lua"),
		one.AdmitChunk(one.Key("lua", 0), 1700000000), many.AdmitChunk(many.Key("lua", 2), 1700000000), one.Participants()} {
		scheme := one
		if strings.Contains(key, "{user.") || key == many.Probe("lua") {
			scheme = many
		}
		if !scheme.Owns(key) {
			t.Errorf("%q not owned by its own scheme", key)
		}
	}
	for _, key := range []string{"rl:{user42}:lua", "rl:{user-1}:lua", "rl:{user}:notes", "rl:{user}:lua:notes",
		"rl:{user}:lua:12x", "rl:{user}", "rl:{user}:", "rl:{userx}:lua:witness", "rl:{user}:naive", "rl:{user}:probe-naive",
		"rlx:{user}:lua", "r:{user}:lua", "rl:{user.0}:lua", "x:rl:{user}:lua",
		"rl:{user}:lua:admits:", "rl:{user}:lua:admits:12x", "rl:{user}:lua:admits", "rl:{user}:probe-lua:admits:17",
		one.ReportKey("host-1-abc"), one.CallsKey("host-1-abc", CallsClock), one.Calls("host-1-abc", "lua", 3)} {
		if one.Owns(key) {
			t.Errorf("%q owned by rl/user/1 key", key)
		}
	}
	for _, key := range []string{"rl:{user}:lua", "rl:{user.3}:lua", "rl:{user.01}:lua", "rl:{user.}:lua", "rl:{user.-1}:lua"} {
		if many.Owns(key) {
			t.Errorf("%q owned by rl/user/3 keys", key)
		}
	}
	// Only a limiter whose decisions write window keys owns a window start after its key.
	sliding := Scheme{Prefix: "rl", RunID: "user", Limiter: limiter.SlidingWindow, Keys: 1, Strategies: []string{"lua"}}
	if key := sliding.Key("lua", 0) + ":1700000000000"; sliding.Owns(key) || !sliding.Owns(sliding.Key("lua", 0)) {
		t.Errorf("sliding window: owns %q %v, owns its key %v", key, sliding.Owns(key), sliding.Owns(sliding.Key("lua", 0)))
	}
	// The custom strategy's contract names its keys from {key}: any suffix is its own.
	custom := Scheme{Prefix: "rl", RunID: "user", Keys: 1, Strategies: []string{"custom"}}
	for _, key := range []string{custom.Key("custom", 0) + ":in_progress", custom.Key("custom", 0) + ":backlog",
		custom.Key("custom", 0) + ":1700000000", custom.Probe("custom") + ":in_progress",
		// Libraries join a key's parts with other characters too: sidekiq-throttled's
		// ".backlog_info", Spring Cloud Gateway's ".tokens", limits' "/-1", Laravel's slot numbers.
		custom.Key("custom", 0) + ".backlog_info", custom.Key("custom", 0) + ".tokens", custom.Key("custom", 0) + "/-1",
		custom.Key("custom", 0) + "17", custom.Probe("custom") + ".backlog_info",
		// The virtual clock's mark of a key's TIME.
		limiter.TimeKey(custom.Key("custom", 0)), limiter.TimeKey(custom.Probe("custom"))} {
		if !custom.Owns(key) {
			t.Errorf("%q, a key of the custom contract, not owned", key)
		}
	}
	for _, key := range []string{"rl:{user}:lua:backlog", "rl:{user2}:custom:backlog", "rl:{user}:customer:x"} {
		if custom.Owns(key) {
			t.Errorf("%q owned by the custom scheme", key)
		}
	}
}

func TestSchemeNamesEveryKeyOfTheRun(t *testing.T) {
	one := Scheme{Prefix: "rl", RunID: "r1", Keys: 1}
	many := Scheme{Prefix: "rl", RunID: "r1", Keys: 3}
	for _, tc := range []struct{ got, want string }{
		{one.Key("lua", 0), "rl:{r1}:lua"},
		{many.Key("lua", 2), "rl:{r1.2}:lua"}, // "." is never in a run id: no other run has this tag
		{one.Witness(one.Key("lua", 0)), "rl:{r1}:lua:witness"},
		{one.Probe("cleanup"), "rl:{r1}:probe-cleanup"},
		{one.AdmitChunk(many.Key("lua", 2), 1700000000), "rl:{r1.2}:lua:admits:1700000000"},
		{one.Participants(), "rl:{r1}:participants"},
		{limiter.TimeKey(one.Key("custom", 0)), "rl:{r1}:custom:limitctl-time"}, // the virtual clock's mark
		{one.ReportKey("host-1"), "rl:report:{r1}:host-1"},
		{one.CallsKey("host-1", CallsClock), "rl:calls:{r1}:host-1:clock"},
		{one.Calls("host-1", "lua", 12), "rl:calls:{r1}:host-1:s:lua:12"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// Each evidence key of hammer report's refusal judges is read back as what it was built from,
// and nothing else is taken for one.
func TestCallsKeysReadBackAsBuilt(t *testing.T) {
	one := Scheme{Prefix: "rl", RunID: "r1"}
	if p, what, st, n, ok := one.CallsKeyOf(one.Calls("h-1-ab", "lua-ts-member", 42)); !ok || p != "h-1-ab" || what != "" || st != "lua-ts-member" || n != 42 {
		t.Errorf("calls key read as %q %q %q %d %v", p, what, st, n, ok)
	}
	for _, what := range []string{CallsClock, CallsMeta} {
		if p, got, _, _, ok := one.CallsKeyOf(one.CallsKey("h-1-ab", what)); !ok || p != "h-1-ab" || got != what {
			t.Errorf("%s key read as %q %q %v", what, p, got, ok)
		}
	}
	for _, key := range []string{"rl:calls:{r1}:h:s:lua:x", "rl:calls:{r1}:h:s:lua", "rl:calls:{r12}:h:clock", "rl:calls:{r1}:h:notes",
		"rl:calls:{r1}::clock", one.ReportKey("h"), one.Key("lua", 0)} {
		if _, _, _, _, ok := one.CallsKeyOf(key); ok {
			t.Errorf("%q taken for an evidence key", key)
		}
	}
	if _, ok := one.StrategyOf(one.Calls("h", "lua", 1)); ok {
		t.Error("an evidence key is taken for a strategy's")
	}
}
