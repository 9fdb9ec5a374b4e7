package lint

import (
	"strings"
	"testing"
)

// A script in StackExchange.Redis LuaScript's source form does not parse; the syntax error says
// how its @name parameters map to ARGV (in the order each first appears, a repeat keeping its
// number, a comment naming none), so the user can lint and hammer the rewritten script.
func TestLuaScriptParametersAreExplained(t *testing.T) {
	src := "-- @ignored in a comment\nlocal count = redis.call('INCR', @counter)\nif count == 1 then redis.call('PEXPIRE', @counter, @windowMs * 2) end\nreturn count <= tonumber(@limit) and 1 or 0\n"
	ds := Lint("se.lua", []byte(src))
	if len(ds) != 1 || ds[0].Rule != RuleSyntax {
		t.Fatalf("diagnostics %v, want one syntax error", ds)
	}
	want := "(@counter is ARGV[1], @windowMs is ARGV[2], @limit is ARGV[3])"
	if !strings.Contains(ds[0].Message, "StackExchange.Redis LuaScript") || !strings.Contains(ds[0].Message, want) {
		t.Errorf("message %q lacks the mapping %q", ds[0].Message, want)
	}
	// An @ that is no parameter's gets the plain syntax error.
	if ds := Lint("at.lua", []byte("return 1 @ 2\n")); len(ds) != 1 || strings.Contains(ds[0].Message, "LuaScript") {
		t.Errorf("a stray @: %v", ds)
	}
}
