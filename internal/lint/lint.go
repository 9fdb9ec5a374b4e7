package lint

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/parse"

	"github.com/limitctl/limitctl/internal/lint/source"
)

// Lint checks one Redis Lua script (an EVAL script, or a Function library
// starting with `#!lua name=...`) with every rule and returns its
// diagnostics sorted by line, column and rule; the slice is empty, never nil,
// for a clean script. filename only labels the diagnostics. A script that
// does not parse gets a single syntax diagnostic and no other checks.
func Lint(filename string, src []byte) []Diagnostic {
	return LintWith(filename, src, Config{})
}

// LintWith is Lint with the rules cfg disables left out.
func LintWith(filename string, src []byte, cfg Config) []Diagnostic {
	lines := source.Lines(src)
	var diags []Diagnostic
	head := source.ReadHeader(lines[0])
	body := src
	if head.Present {
		body = source.BlankHeader(src)
	}
	chunk, err := parse.Parse(bytes.NewReader(body), filename)
	// gopher-lua returns a nil chunk without an error when its parser panics
	// with something other than an error; that is no parse either.
	var tokens source.Tokens
	if err == nil && chunk != nil {
		tokens = source.Scan(body)
	}
	if err != nil || chunk == nil {
		diags = []Diagnostic{syntaxError(filename, lines, err)}
	} else if at, msg, ok := source.NotLua51(tokens, lines); ok {
		diags = []Diagnostic{{File: filename, Line: at.Line, Col: max(at.Col, 1), Severity: severityOf(RuleSyntax), Rule: RuleSyntax, Message: msg}}
	} else {
		c := &checker{file: filename, lines: lines, pos: source.Locate(chunk, tokens), unit: newUnit(head.NoWrites), library: head.Library}
		for _, p := range head.Problems {
			c.report(source.Pos{Line: 1, Col: p.Col}, RuleShebang, "%s", p.Msg)
		}
		if c.library {
			c.callbacks = registrations(chunk)
		}
		c.block(chunk)
		if c.library && c.registrations == 0 {
			c.report(source.Pos{Line: 1, Col: 1}, RuleLibrary,
				"this Function library registers no function, and FUNCTION LOAD refuses it (No functions registered); call redis.register_function('name', function(keys, args) ... end)")
		}
		c.missingExpire(c.unit)
		diags = c.diags
	}
	diags = suppress(cfg.filter(diags), lines)
	sortDiagnostics(diags)
	if diags == nil {
		diags = []Diagnostic{}
	}
	return diags
}

// syntaxError turns a parser error into a diagnostic at the parser's
// position; an error at the end of the file points just past the last
// non-blank line.
func syntaxError(filename string, lines []string, err error) Diagnostic {
	d := Diagnostic{File: filename, Line: 1, Col: 1, Severity: severityOf(RuleSyntax), Rule: RuleSyntax}
	var perr *parse.Error
	switch {
	case errors.As(err, &perr) && perr.Pos.Line == parse.EOF:
		d.Line, d.Col = endOfText(lines)
		d.Message = fmt.Sprintf("%s at end of file; close the block, string or comment that is still open (Redis runs Lua 5.1)",
			strings.TrimSpace(perr.Message))
	case errors.As(err, &perr):
		d.Line, d.Col = max(perr.Pos.Line, 1), max(perr.Pos.Column, 1)
		d.Message = fmt.Sprintf("%s near %q; fix the script so it compiles (Redis runs Lua 5.1)",
			strings.TrimSpace(perr.Message), perr.Token)
		if hint := luaScriptHint(lines); perr.Token == "@" && hint != "" {
			d.Message = fmt.Sprintf("%s near %q; %s", strings.TrimSpace(perr.Message), perr.Token, hint)
		}
	case err != nil:
		d.Message = fmt.Sprintf("the Lua parser failed: %s; fix the script so it compiles (Redis runs Lua 5.1)",
			strings.TrimSpace(err.Error()))
	default:
		d.Message = "the Lua parser gave up without an error; fix the script so it compiles (Redis runs Lua 5.1)"
	}
	return d
}

// endOfText returns the position just after the last non-blank character.
func endOfText(lines []string) (line, col int) {
	for i := len(lines) - 1; i >= 0; i-- {
		if text := strings.TrimRight(lines[i], " \t"); text != "" {
			return i + 1, len(text) + 1
		}
	}
	return 1, 1
}
