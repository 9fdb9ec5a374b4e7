package lint

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/lint/source"
)

// edgeSeeds are small inputs at the edges of the parser and the walker, seeded
// next to the fixtures.
var edgeSeeds = []string{
	"",
	"\n\r\r\n",
	"--",
	"--[[ unclosed",
	"local",
	"'unclosed",
	"x = = 1",
	"redis.call()",
	"redis.call(1, 2)",
	"redis.call('SET')",
	"redis.call('MSET', KEYS[1])",
	"redis.call('ZRANGE', KEYS[1], 0)",
	"return (...)",
	"local t = {[ARGV[1]] = KEYS[1], x = ARGV[2], ARGV[3]}",
	"function a.b.c:d(...) self = ... end",
	"::top:: goto top",
	"for k in next, KEYS do redis.call('DEL', k) end",
	"return " + strings.Repeat("(", 300) + "ARGV[1]" + strings.Repeat(")", 300) + " + 1",
	"return " + strings.Repeat("KEYS[1] .. ", 500) + "'x'",
	"return " + strings.Repeat("-", 500) + "ARGV[1]",
	"return redis.call('GET', '\xff\xfe\n')",
	"return redis.call('GET', '" + strings.Repeat("é", 60) + "')",
	"#!",
	"#!lua",
	"#!lua name=",
	"#!lua name=x\r\nredis.register_function()",
	"#!lua name=x\nredis.register_function{callback=1, flags={1, 'no-writes', x=2}}",
	"#!lua name=x\nlocal f\nredis.register_function('f', f)\nredis.register_function('g', undefined)",
	"#!lua flags=no-writes\nlocal function w(k) return w(k) end\nw(KEYS[1])",
	"local function f(a, a) redis.call('PEXPIRE', a, 1) end\nf()\nf(KEYS[1], KEYS[2], KEYS[3])",
	"repeat local x until not not not x",
	"while (redis.call('GET', KEYS[1])) do redis.call('DEL', KEYS[1]) end",
	"for i = 1, 2 do\n\tgoto continue\n\t::continue::\nend",
	"local f = g\n(h)()\nlocal function k\n(a) end\nlocal t = {}\n(f)()",
	";;local t = {1;2;};; if 0then end return 1..2 .. 0x1Fand 3e-",
	"#!lua name=x\nlocal M = {f = function(k, a) return k end}\nfunction M.g(k, a) end\nM.h = M.f\nredis.register_function('f', M.f)\nredis.register_function('g', M['g'])\nredis.register_function('h', M.h)",
	"#!lua name=x\nlocal rcall, fl = redis.call, math.floor\nfor k in pairs({}) do end\nredis.log(redis.LOG_WARNING, redis.REDIS_VERSION)",
	"for _, k in ipairs({KEYS[1], {KEYS[2]}, KEYS[3]}) do redis.call('INCR', k) redis.call('PEXPIRE', k, 1) end",
}

func FuzzLint(f *testing.F) {
	for _, path := range fixtures(f) {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range edgeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkWellFormed)
}

// The fuzz body, run over the seeds as an ordinary test too, so a plain
// `go test` proves every seed well-formed without the fuzzing engine.
func TestLintIsWellFormedOnEverySeed(t *testing.T) {
	for _, path := range fixtures(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(path, func(t *testing.T) { checkWellFormed(t, src) })
	}
	for i, s := range edgeSeeds {
		t.Run(fmt.Sprintf("edge-%02d", i), func(t *testing.T) { checkWellFormed(t, []byte(s)) })
	}
}

// checkWellFormed asserts what every caller relies on, whatever the input:
// Lint returns (a panic fails the test), diagnostics point inside the file,
// name a known rule with its severity, are sorted, and are the same on a
// second run.
func checkWellFormed(t *testing.T, src []byte) {
	const file = "fuzz.lua"
	ds := Lint(file, src)
	if ds == nil {
		t.Fatal("Lint returned nil, want an empty slice")
	}
	lines := source.Lines(src)
	severities := map[string]string{}
	for _, r := range Rules() {
		severities[r.Name] = r.Severity
	}
	for i, d := range ds {
		switch {
		case d.File != file:
			t.Errorf("%v: file %q, want %q", d, d.File, file)
		case d.Line < 1 || d.Line > len(lines):
			t.Errorf("%v: line outside 1..%d", d, len(lines))
		case d.Col < 1 || d.Col > len(lines[d.Line-1])+1:
			t.Errorf("%v: column outside 1..%d", d, len(lines[d.Line-1])+1)
		case severities[d.Rule] == "":
			t.Errorf("%v: unknown rule", d)
		case d.Severity != severities[d.Rule]:
			t.Errorf("%v: severity %q, want %q", d, d.Severity, severities[d.Rule])
		case d.Message == "" || strings.ContainsAny(d.Message, "\r\n") || !utf8.ValidString(d.Message):
			t.Errorf("%v: message must be one non-empty line of UTF-8", d)
		case d.Rule == RuleSyntax && len(ds) != 1:
			t.Errorf("%v: a syntax error must be the only diagnostic, got %d", d, len(ds))
		}
		if i > 0 && (ds[i-1].Line > d.Line || ds[i-1].Line == d.Line && ds[i-1].Col > d.Col) {
			t.Errorf("not sorted: %v before %v", ds[i-1], d)
		}
	}
	if again := Lint(file, src); !slices.Equal(ds, again) {
		t.Errorf("a second run differs:\n%s---\n%s", formatAll(ds), formatAll(again))
	}
}
