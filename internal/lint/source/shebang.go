package source

import (
	"fmt"
	"regexp"
	"strings"
)

// Header is what a Redis 7 shebang line (`#!lua flags=no-writes`, or
// `#!lua name=mylib` for a Function library) says about a script.
type Header struct {
	Present  bool
	Library  bool // name=...: a Function library for FUNCTION LOAD, not an EVAL script
	NoWrites bool // flags=no-writes: Redis refuses every write command
	Problems []HeaderProblem
}

// HeaderProblem is what Redis refuses in the shebang line, at its 1-based column.
type HeaderProblem struct {
	Col int
	Msg string
}

// evalFlags are the flags EVAL accepts in `#!lua flags=...` (Redis 7.0).
var evalFlags = map[string]bool{
	"no-writes": true, "allow-oom": true, "allow-stale": true, "no-cluster": true, "allow-cross-slot-keys": true,
}

var libraryName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// ReadHeader parses the first line when it starts with "#!", as Redis does
// before it compiles the rest: for EVAL (evalExtractShebangFlags) the engine
// must be lua and every other word flags=...; for FUNCTION LOAD
// (functionExtractLibMetaData) every other word is name=.... Words are
// separated by spaces. Which of the two the file is comes from its words: any
// name= makes it a library.
func ReadHeader(first string) Header {
	if !strings.HasPrefix(first, "#!") {
		return Header{}
	}
	h := Header{Present: true}
	type word struct {
		text string
		col  int
	}
	var words []word
	for i := 0; i < len(first); {
		for i < len(first) && (first[i] == ' ' || first[i] == '\t') {
			i++
		}
		start := i
		for i < len(first) && first[i] != ' ' && first[i] != '\t' {
			i++
		}
		if i > start {
			words = append(words, word{first[start:i], start + 1})
		}
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w.text, "name=") {
			h.Library = true
		}
	}
	// EVAL compares the engine exactly; FUNCTION LOAD ignores its case.
	if engine := words[0].text; engine != "#!lua" && !(h.Library && strings.EqualFold(engine, "#!lua")) {
		h.Problems = append(h.Problems, HeaderProblem{1, fmt.Sprintf(
			"Redis refuses the script: the shebang names engine %q, and Redis runs only #!lua; start the file with '#!lua' (plus flags=... for EVAL, name=... for a Function library), or remove the line",
			strings.TrimPrefix(engine, "#!"))})
		return h // Redis stops at the engine too
	}
	named := false
	for _, w := range words[1:] {
		key, val, _ := strings.Cut(w.text, "=")
		switch {
		case h.Library && key == "name":
			named = true
			if !libraryName.MatchString(val) {
				h.Problems = append(h.Problems, HeaderProblem{w.col, fmt.Sprintf(
					"FUNCTION LOAD refuses library name %q: use only letters, digits and underscores", val)})
			}
		case h.Library:
			h.Problems = append(h.Problems, HeaderProblem{w.col, fmt.Sprintf(
				"FUNCTION LOAD refuses %q in a library's shebang (only name=...); give flags per function: redis.register_function{function_name=..., callback=..., flags={'no-writes'}}", w.text)})
		case key == "flags" && strings.Contains(w.text, "="):
			if val == "" {
				break // flags= with nothing is accepted; flags=a, is not
			}
			for _, flag := range strings.Split(val, ",") {
				switch {
				case flag == "":
					h.Problems = append(h.Problems, HeaderProblem{w.col,
						"Redis refuses the script: an empty shebang flag (a stray comma in flags=...)"})
				case !evalFlags[flag]:
					h.Problems = append(h.Problems, HeaderProblem{w.col, fmt.Sprintf(
						"Redis refuses the script: unknown shebang flag %q (EVAL accepts no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys)", flag)})
				case flag == "no-writes":
					h.NoWrites = true
				}
			}
		default:
			h.Problems = append(h.Problems, HeaderProblem{w.col, fmt.Sprintf(
				"Redis refuses the script: unknown shebang option %q (EVAL accepts only flags=...)", w.text)})
		}
	}
	if h.Library && !named {
		h.Problems = append(h.Problems, HeaderProblem{1, "FUNCTION LOAD refuses a library without a name: write '#!lua name=mylib'"})
	}
	return h
}

// BlankHeader returns src with its shebang line replaced by spaces, so the
// Lua parser sees what Redis compiles (Redis skips the line but keeps its
// line feed, so line numbers stay the user's) and columns stay the same.
func BlankHeader(src []byte) []byte {
	end := len(src)
	for i, c := range src {
		if c == '\n' || c == '\r' {
			end = i
			break
		}
	}
	out := make([]byte, len(src))
	copy(out, src)
	for i := 0; i < end; i++ {
		out[i] = ' '
	}
	return out
}
