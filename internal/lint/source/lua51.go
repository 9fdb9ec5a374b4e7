package source

import (
	"regexp"
	"strings"

	"github.com/yuin/gopher-lua/parse"
)

// gopher-lua's parser takes a little more than Lua 5.1, which Redis runs:
// a script it parses may still fail SCRIPT LOAD. NotLua51 finds, in the
// tokens of a script that parsed, the first of those differences (each
// checked on redis-server 7.0) and says what Redis answers.

// NotLua51 returns where and why Lua 5.1 refuses a script gopher-lua parsed:
//   - goto and ::labels:: (Lua 5.2);
//   - a call whose ( starts a line after a name, ) or ] (Lua 5.1: ambiguous
//     syntax, function call x new statement);
//   - an empty statement: a ; at the start of a block or after another ;
//     (Lua 5.2 allows them);
//   - a number run into a name or keyword (0then, 3return): Lua 5.1 reads
//     letters after digits as part of the number (malformed number).
func NotLua51(tokens Tokens, lines []string) (Pos, string, bool) {
	funcName := false // between `function` and its parameter list
	for i, t := range tokens {
		var prev *token
		if i > 0 {
			prev = &tokens[i-1]
		}
		switch {
		case t.typ == parse.TGoto:
			return t.pos, "goto is Lua 5.2, and Redis runs Lua 5.1, where it does not compile ('=' expected near the label); skip the rest of a loop body with if ... end instead", true
		case t.typ == parse.T2Colon:
			return t.pos, "a ::label:: is Lua 5.2, and Redis runs Lua 5.1, where it does not compile (unexpected symbol near ':'); skip the rest of a loop body with if ... end instead", true
		case t.typ == parse.TFunction:
			funcName = true
		case t.typ == '(' && funcName:
			funcName = false
		case t.typ == '(' && prev != nil && t.pos.Line > prev.pos.Line && endsPrefix(*prev):
			return t.pos, "ambiguous syntax (function call x new statement): Redis runs Lua 5.1, which refuses a ( that starts a line right after a name, ) or ], since it would call what ends the line above; end the statement above with ; or move the ( up", true
		case t.typ == ';' && (prev == nil || opensBlock(*prev)):
			return t.pos, "an empty statement (a ; with no statement before it) is Lua 5.2, and Redis runs Lua 5.1, where it does not compile (unexpected symbol near ';'); remove the extra ;", true
		case t.typ == parse.TNumber:
			if text := numeral51(lines, t.pos); !validNumber.MatchString(text) {
				return t.pos, "malformed number near '" + text + "': Redis runs Lua 5.1, which reads letters right after a number as part of it; put a space between the number and the word that follows", true
			}
		}
	}
	return Pos{}, "", false
}

// endsPrefix reports whether a token can end an expression that ( would
// call: a name, ) or ].
func endsPrefix(t token) bool {
	return t.typ == parse.TIdent || t.typ == ')' || t.typ == ']'
}

// opensBlock reports whether a token is one after which Lua 5.1 expects a
// statement, not a ;.
func opensBlock(t token) bool {
	switch t.typ {
	case ';', parse.TDo, parse.TThen, parse.TElse, parse.TRepeat:
		return true
	}
	return false
}

// numeral51 is the text Lua 5.1's lexer reads as one number from pos: digits
// and dots, an exponent with its sign, then any letters, digits and _.
func numeral51(lines []string, at Pos) string {
	if at.Line < 1 || at.Line > len(lines) || at.Col < 1 || at.Col > len(lines[at.Line-1]) {
		return "0" // unknown: assume well formed
	}
	rest := lines[at.Line-1][at.Col-1:]
	i := 0
	for i < len(rest) && (isDigit(rest[i]) || rest[i] == '.') {
		i++
	}
	if i < len(rest) && (rest[i] == 'e' || rest[i] == 'E') {
		i++
		if i < len(rest) && (rest[i] == '+' || rest[i] == '-') {
			i++
		}
	}
	for i < len(rest) && (isDigit(rest[i]) || rest[i] == '_' || isLetter(rest[i])) {
		i++
	}
	return strings.TrimSpace(rest[:i])
}

// validNumber is what Lua 5.1's luaO_str2d accepts (C strtod, or a hex
// integer), as far as a source numeral can spell it.
var validNumber = regexp.MustCompile(`^(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|0[xX][0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?(?:[pP][+-]?[0-9]+)?)$`)

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
