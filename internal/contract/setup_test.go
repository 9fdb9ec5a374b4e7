package contract

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// A set-up command expands per key with the run's values folded in; a set-up script's line is
// split at its lone ',' into KEYS and ARGV, as redis-cli --eval splits it.
func TestSetupExpandsPerKey(t *testing.T) {
	static := Static{Limit: 5, Burst: 5, Cost: 1, RatePerS: 5, Window: time.Second, StaleAfter: 10 * time.Second}
	now := time.UnixMilli(1_700_000_000_123)
	cmd, err := ParseSetup(SetupLine{Flag: FlagSetup, Text: `EVAL "return redis.call('set', KEYS[1], ARGV[1], 'NX')" 1 {key}:permits {limit}`})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cmd.Bind(static)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"EVAL", "return redis.call('set', KEYS[1], ARGV[1], 'NX')", "1", "k:{r}:custom:permits", "5"}
	if got := b.Command("k:{r}:custom", now); !reflect.DeepEqual(got, want) {
		t.Errorf("command %q, want %q", got, want)
	}
	if _, _, ok := b.Script("k", now); ok {
		t.Error("a command step expands as a script")
	}

	file, err := ParseSetup(SetupLine{Flag: FlagSetupFile, Text: "init.lua {key}:settings {key}:clients , {now_ms} 0 reservoir {limit} interval {window_ms * 2}"})
	if err != nil {
		t.Fatal(err)
	}
	if file.File != "init.lua" || file.Command != nil {
		t.Fatalf("file %q command %v", file.File, file.Command)
	}
	b, err = file.Bind(static)
	if err != nil {
		t.Fatal(err)
	}
	keys, args, ok := b.Script("k:{r}:custom", now)
	if !ok || !reflect.DeepEqual(keys, []string{"k:{r}:custom:settings", "k:{r}:custom:clients"}) ||
		!reflect.DeepEqual(args, []any{"1700000000123", "0", "reservoir", "5", "interval", "2000"}) {
		t.Errorf("keys %q args %q", keys, args)
	}
	// A lone ',' with nothing after it: a script of KEYS only.
	if s, err := ParseSetup(SetupLine{Flag: FlagSetupFile, Text: "init.lua {key} ,"}); err != nil || s.Keys.Len() != 1 || s.Args.Len() != 0 {
		t.Errorf("KEYS only: %+v, %v", s, err)
	}
}

// Every refusal names its flag, and the column where there is one.
func TestSetupRefusals(t *testing.T) {
	for _, c := range []struct {
		line SetupLine
		want string
	}{
		{SetupLine{Flag: FlagSetup, Text: "SET {key} {limt}"}, "--script-setup: column 11: unknown placeholder {limt}"},
		{SetupLine{Flag: FlagSetup, Text: ""}, "--script-setup: empty"},
		{SetupLine{Flag: FlagSetup, Text: "{key} 1"}, "--script-setup: column 1: the first word must be a command name"},
		{SetupLine{Flag: FlagSetup, Text: "SET config 1"}, "--script-setup: names no key of the run"},
		{SetupLine{Flag: FlagSetup, Text: "SET {key} {member}"}, "--script-setup: {member} belongs to a request"},
		{SetupLine{Flag: FlagSetup, Text: "SET {key} {reply}"}, "--script-setup: {reply} belongs to a request"},
		{SetupLine{Flag: FlagSetupFile, Text: "init.lua {key} {limit}"}, "--script-setup-file: column 23: no ',' between the KEYS and the ARGV"},
		{SetupLine{Flag: FlagSetupFile, Text: "init.lua {key}, {limit}"}, "--script-setup-file: column 24: no ','"},
		{SetupLine{Flag: FlagSetupFile, Text: "init.lua config , 1"}, "--script-setup-file: key 1 must contain {key}"},
		{SetupLine{Flag: FlagSetupFile, Text: "{key}.lua {key} ,"}, "--script-setup-file: column 1: the first word must be the script's file name"},
		{SetupLine{Flag: FlagSetupFile, Text: "init.lua {key} , {now_mss}"}, "--script-setup-file: column 18: unknown placeholder {now_mss}"},
	} {
		_, err := ParseSetup(c.line)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseSetup(%q) = %v, want %q", c.line.Text, err, c.want)
		}
	}
}
