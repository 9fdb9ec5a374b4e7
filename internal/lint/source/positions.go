// Package source reads a Redis Lua script's text for the linter: its lines, its Redis 7 shebang,
// its tokens and the column of each AST node, and what Lua 5.1 refuses that gopher-lua parses.
package source

import (
	"bytes"

	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// gopher-lua's AST keeps a line but no column for its nodes, while its
// scanner knows both for every token. Positions joins the two: it walks the
// AST in source order and pairs every name and string literal (and the
// while/repeat/for keywords) with the next scanner token of the same text.
// Every such token belongs to exactly one of those AST leaves, so the pairing
// is exact; where it fails (a leaf on another line than its token), the leaf
// simply has no column and the diagnostic falls back to the line's first
// non-blank column. Columns are 1-based byte offsets, a tab counting as one.

// Pos is a 1-based line and column; Col is 0 when unknown.
type Pos struct{ Line, Col int }

type token struct {
	typ int
	str string
	pos Pos
}

// Tokens are a script's tokens, in source order.
type Tokens []token

// Positions maps AST leaves and loop statements to the position of their
// token.
type Positions struct {
	tokens Tokens
	next   int // tokens before next are paired already
	of     map[ast.PositionHolder]Pos
}

// Scan lists the tokens of a script that parsed; a scan error cannot
// happen then, but would only end the list early.
func Scan(src []byte) Tokens {
	sc := parse.NewScanner(bytes.NewReader(src), "")
	var lexer parse.Lexer
	var tokens Tokens
	for {
		tok, err := sc.Scan(&lexer)
		if err != nil || tok.Type < 0 {
			return tokens
		}
		tokens = append(tokens, token{tok.Type, tok.Str, Pos{tok.Pos.Line, tok.Pos.Column}})
	}
}

// Locate pairs the leaves of a parsed chunk with its tokens.
func Locate(chunk []ast.Stmt, tokens Tokens) *Positions {
	p := &Positions{tokens: tokens, of: map[ast.PositionHolder]Pos{}}
	p.block(chunk)
	return p
}

// pair finds the next unpaired token that matches and, for a node, records
// its position. A node's token must be on the node's line: the search stops
// past it, leaving the node without a column rather than pairing it wrongly.
func (p *Positions) pair(node ast.PositionHolder, line int, match func(token) bool) {
	for i := p.next; i < len(p.tokens); i++ {
		tok := p.tokens[i]
		if line > 0 && tok.pos.Line > line {
			return
		}
		if match(tok) && (line <= 0 || tok.pos.Line == line) {
			p.next = i + 1
			if node != nil {
				p.of[node] = tok.pos
			}
			return
		}
	}
}

// word pairs a name or string literal; both are words, since `t.x`,
// `{x = 1}` and `t["x"]` all give the AST the string "x".
func (p *Positions) word(node ast.PositionHolder, line int, text string) {
	p.pair(node, line, func(t token) bool {
		return (t.typ == parse.TIdent || t.typ == parse.TString) && t.str == text
	})
}

// name pairs a declared name, which the AST keeps as a bare string.
func (p *Positions) name(text string) { p.word(nil, 0, text) }

func (p *Positions) keyword(stmt ast.Stmt, typ int) {
	p.pair(stmt, stmt.Line(), func(t token) bool { return t.typ == typ })
}

func (p *Positions) block(stmts []ast.Stmt) {
	for _, s := range stmts {
		p.stmt(s)
	}
}

func (p *Positions) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		p.exprs(s.Lhs)
		p.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		for _, n := range s.Names {
			p.name(n)
		}
		p.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		p.expr(s.Expr)
	case *ast.DoBlockStmt:
		p.block(s.Stmts)
	case *ast.WhileStmt:
		p.keyword(s, parse.TWhile)
		p.expr(s.Condition)
		p.block(s.Stmts)
	case *ast.RepeatStmt:
		p.keyword(s, parse.TRepeat)
		p.block(s.Stmts)
		p.expr(s.Condition)
	case *ast.IfStmt:
		p.expr(s.Condition)
		p.block(s.Then)
		p.block(s.Else)
	case *ast.NumberForStmt:
		p.keyword(s, parse.TFor)
		p.name(s.Name)
		p.expr(s.Init)
		p.expr(s.Limit)
		p.expr(s.Step)
		p.block(s.Stmts)
	case *ast.GenericForStmt:
		p.keyword(s, parse.TFor)
		for _, n := range s.Names {
			p.name(n)
		}
		p.exprs(s.Exprs)
		p.block(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name.Func != nil {
			p.expr(s.Name.Func)
		} else {
			p.expr(s.Name.Receiver)
			p.name(s.Name.Method)
		}
		p.expr(s.Func)
	case *ast.ReturnStmt:
		p.exprs(s.Exprs)
	case *ast.LabelStmt:
		p.name(s.Name)
	case *ast.GotoStmt:
		p.name(s.Label)
	}
}

func (p *Positions) exprs(es []ast.Expr) {
	for _, e := range es {
		p.expr(e)
	}
}

func (p *Positions) expr(e ast.Expr) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		p.word(e, e.Line(), e.Value)
	case *ast.StringExpr:
		p.word(e, e.Line(), e.Value)
	case *ast.NumberExpr:
		p.pair(e, e.Line(), func(t token) bool { return t.typ == parse.TNumber && t.str == e.Value })
	case *ast.AttrGetExpr:
		p.expr(e.Object)
		p.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			p.expr(f.Key)
			p.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		if e.Func != nil {
			p.expr(e.Func)
		} else {
			p.expr(e.Receiver)
			p.name(e.Method)
		}
		p.exprs(e.Args)
	case *ast.LogicalOpExpr:
		p.expr(e.Lhs)
		p.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		p.expr(e.Lhs)
		p.expr(e.Rhs)
	case *ast.StringConcatOpExpr:
		p.expr(e.Lhs)
		p.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		p.expr(e.Lhs)
		p.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		p.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		p.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		p.expr(e.Expr)
	case *ast.FunctionExpr:
		for _, n := range e.ParList.Names {
			p.name(n)
		}
		p.block(e.Stmts)
	}
}

// At returns where an expression starts, as far as its tokens tell: the
// position of its leftmost name or string. Col is 0 when unknown.
func (p *Positions) At(e ast.Expr) Pos {
	switch e := e.(type) {
	case *ast.IdentExpr, *ast.StringExpr, *ast.NumberExpr:
		if at, ok := p.of[e]; ok {
			return at
		}
	case *ast.AttrGetExpr:
		return p.At(e.Object)
	case *ast.FuncCallExpr:
		if e.Func != nil {
			return p.At(e.Func)
		}
		return p.At(e.Receiver)
	case *ast.LogicalOpExpr:
		return p.At(e.Lhs)
	case *ast.RelationalOpExpr:
		return p.At(e.Lhs)
	case *ast.StringConcatOpExpr:
		return p.At(e.Lhs)
	case *ast.ArithmeticOpExpr:
		return p.At(e.Lhs)
	case *ast.UnaryMinusOpExpr:
		return p.At(e.Expr) // the operator has no paired token: its operand's
	case *ast.UnaryNotOpExpr:
		return p.At(e.Expr)
	case *ast.UnaryLenOpExpr:
		return p.At(e.Expr)
	}
	if e == nil {
		return Pos{}
	}
	return Pos{Line: e.Line()}
}

// AtStmt returns the position of a loop statement's keyword.
func (p *Positions) AtStmt(s ast.Stmt) Pos {
	if at, ok := p.of[s]; ok {
		return at
	}
	return Pos{Line: s.Line()}
}
