package lint

import (
	"fmt"
	"regexp"
	"strings"
)

// header is what a Redis 7 shebang line (`#!lua flags=no-writes`, or
// `#!lua name=mylib` for a Function library) says about a script.
type header struct {
	present  bool
	library  bool // name=...: a Function library for FUNCTION LOAD, not an EVAL script
	noWrites bool // flags=no-writes: Redis refuses every write command
	problems []headerProblem
}

type headerProblem struct {
	col int
	msg string
}

// evalFlags are the flags EVAL accepts in `#!lua flags=...` (Redis 7.0).
var evalFlags = map[string]bool{
	"no-writes": true, "allow-oom": true, "allow-stale": true, "no-cluster": true, "allow-cross-slot-keys": true,
}

var libraryName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// readHeader parses the first line when it starts with "#!", as Redis does
// before it compiles the rest: for EVAL (evalExtractShebangFlags) the engine
// must be lua and every other word flags=...; for FUNCTION LOAD
// (functionExtractLibMetaData) every other word is name=.... Words are
// separated by spaces. Which of the two the file is comes from its words: any
// name= makes it a library.
func readHeader(first string) header {
	if !strings.HasPrefix(first, "#!") {
		return header{}
	}
	h := header{present: true}
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
			h.library = true
		}
	}
	// EVAL compares the engine exactly; FUNCTION LOAD ignores its case.
	if engine := words[0].text; engine != "#!lua" && !(h.library && strings.EqualFold(engine, "#!lua")) {
		h.problems = append(h.problems, headerProblem{1, fmt.Sprintf(
			"Redis refuses the script: the shebang names engine %q, and Redis runs only #!lua; start the file with '#!lua' (plus flags=... for EVAL, name=... for a Function library), or remove the line",
			strings.TrimPrefix(engine, "#!"))})
		return h // Redis stops at the engine too
	}
	named := false
	for _, w := range words[1:] {
		key, val, _ := strings.Cut(w.text, "=")
		switch {
		case h.library && key == "name":
			named = true
			if !libraryName.MatchString(val) {
				h.problems = append(h.problems, headerProblem{w.col, fmt.Sprintf(
					"FUNCTION LOAD refuses library name %q: use only letters, digits and underscores", val)})
			}
		case h.library:
			h.problems = append(h.problems, headerProblem{w.col, fmt.Sprintf(
				"FUNCTION LOAD refuses %q in a library's shebang (only name=...); give flags per function: redis.register_function{function_name=..., callback=..., flags={'no-writes'}}", w.text)})
		case key == "flags" && strings.Contains(w.text, "="):
			if val == "" {
				break // flags= with nothing is accepted; flags=a, is not
			}
			for _, flag := range strings.Split(val, ",") {
				switch {
				case flag == "":
					h.problems = append(h.problems, headerProblem{w.col,
						"Redis refuses the script: an empty shebang flag (a stray comma in flags=...)"})
				case !evalFlags[flag]:
					h.problems = append(h.problems, headerProblem{w.col, fmt.Sprintf(
						"Redis refuses the script: unknown shebang flag %q (EVAL accepts no-writes, allow-oom, allow-stale, no-cluster, allow-cross-slot-keys)", flag)})
				case flag == "no-writes":
					h.noWrites = true
				}
			}
		default:
			h.problems = append(h.problems, headerProblem{w.col, fmt.Sprintf(
				"Redis refuses the script: unknown shebang option %q (EVAL accepts only flags=...)", w.text)})
		}
	}
	if h.library && !named {
		h.problems = append(h.problems, headerProblem{1, "FUNCTION LOAD refuses a library without a name: write '#!lua name=mylib'"})
	}
	return h
}

// blankHeader returns src with its shebang line replaced by spaces, so the
// Lua parser sees what Redis compiles (Redis skips the line but keeps its
// line feed, so line numbers stay the user's) and columns stay the same.
func blankHeader(src []byte) []byte {
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
