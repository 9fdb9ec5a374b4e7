package source

import (
	"bytes"
	"slices"
	"testing"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

func TestLinesEndAsTheParserCountsThem(t *testing.T) {
	got := Lines([]byte("a\nb\r\nc\n\rd\re"))
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}

// Each name and string is paired with its own token, so an expression's column is that of its
// leftmost name, also when the same name comes earlier on the line.
func TestLocatePairsEachLeafWithItsToken(t *testing.T) {
	src := []byte("local k = KEYS[1]\nwhile true do end\n  return redis.call('GET', k) .. k\n")
	chunk, err := parse.Parse(bytes.NewReader(src), "t.lua")
	if err != nil {
		t.Fatal(err)
	}
	pos := Locate(chunk, Scan(src))
	ret := chunk[2].(*ast.ReturnStmt).Exprs[0].(*ast.StringConcatOpExpr)
	if got := pos.At(ret); got != (Pos{3, 10}) {
		t.Errorf("the concatenation starts at %v, want 3:10 (redis)", got)
	}
	if got := pos.At(ret.Rhs); got != (Pos{3, 34}) {
		t.Errorf("the last k is at %v, want 3:34", got)
	}
	if got := pos.AtStmt(chunk[1]); got != (Pos{2, 1}) {
		t.Errorf("the while loop is at %v, want 2:1", got)
	}
}

func TestReadHeaderAndBlankIt(t *testing.T) {
	h := ReadHeader("#!lua flags=no-writes,allow-oom")
	if !h.Present || h.Library || !h.NoWrites || len(h.Problems) != 0 {
		t.Errorf("EVAL shebang: %+v", h)
	}
	if h := ReadHeader("#!lua name=my-lib"); !h.Library || len(h.Problems) != 1 || h.Problems[0].Col != 7 {
		t.Errorf("library named with a dash: %+v, want one problem at column 7", h)
	}
	if h := ReadHeader("-- a comment"); h.Present {
		t.Errorf("no shebang read as one: %+v", h)
	}
	src := []byte("#!lua\r\nreturn 1")
	if got := BlankHeader(src); string(got) != "     \r\nreturn 1" {
		t.Errorf("BlankHeader = %q", got)
	}
}

func TestNotLua51FindsWhatRedisRefuses(t *testing.T) {
	for src, want := range map[string]Pos{
		"for i = 1, 2 do goto done end ::done::": {1, 17},
		"local x = 1;;":                          {1, 13},
		"if 0then end":                           {1, 4},
		"local f = g\n(h)()":                     {2, 1},
	} {
		if at, msg, ok := NotLua51(Scan([]byte(src)), Lines([]byte(src))); !ok || at != want || msg == "" {
			t.Errorf("%q: %v %q %v, want a refusal at %v", src, at, msg, ok, want)
		}
	}
	if at, msg, ok := NotLua51(Scan([]byte("local x = 1; return x")), []string{"local x = 1; return x"}); ok {
		t.Errorf("Lua 5.1 script refused at %v: %s", at, msg)
	}
}
