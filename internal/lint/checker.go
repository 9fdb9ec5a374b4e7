package lint

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// checker walks a parsed script once, tracking what each local holds, and
// collects diagnostics. The data flow is deliberately simple: a local holds
// the value of its most recent assignment in source order, branches and loops
// included, and function parameters hold unknown values.
type checker struct {
	file  string
	lines []string
	pos   *positions
	scope *scope
	diags []Diagnostic

	// redisCalls counts redis.call/pcall sites walked so far, so a loop can
	// tell whether its body made any.
	redisCalls int
	// writes and expired feed missing-expire, which can only be decided once
	// the whole script has been seen.
	writes  []keyWrite
	expired map[string]bool
	// expireUnresolved is set when a TTL is given to a key the linter cannot
	// name (a function parameter, say): it could be any key, so missing-expire
	// stays silent rather than guess.
	expireUnresolved bool
}

// scope is one block's locals; lookups climb to the enclosing blocks.
type scope struct {
	parent *scope
	vars   map[string]*value
}

func (c *checker) push() { c.scope = &scope{parent: c.scope, vars: map[string]*value{}} }
func (c *checker) pop()  { c.scope = c.scope.parent }

func (c *checker) declare(name string, v value) {
	c.scope.vars[name] = &v
}

// local returns the variable a name refers to, or nil for a global.
func (c *checker) local(name string) *value {
	for s := c.scope; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v
		}
	}
	return nil
}

// report adds a diagnostic at a position, falling back to the first non-blank column
// of the line when the token's column is unknown.
func (c *checker) report(at pos, rule, format string, args ...any) {
	line := max(at.line, 1)
	col := at.col
	if col <= 0 {
		col = firstNonBlank(c.lines, line)
	}
	c.diags = append(c.diags, Diagnostic{
		File:     c.file,
		Line:     line,
		Col:      col,
		Severity: severityOf(rule),
		Rule:     rule,
		Message:  fmt.Sprintf(format, args...),
	})
}

func (c *checker) block(stmts []ast.Stmt) {
	c.push()
	c.stmts(stmts)
	c.pop()
}

func (c *checker) stmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		c.stmt(s)
	}
}

func (c *checker) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.LocalAssignStmt:
		// The values are computed before the names exist: `local x = x` reads
		// the outer x.
		vals := c.exprList(s.Exprs, len(s.Names))
		for i, name := range s.Names {
			c.declare(name, vals[i])
		}
	case *ast.AssignStmt:
		c.assign(s)
	case *ast.FuncCallStmt:
		c.expr(s.Expr)
	case *ast.DoBlockStmt:
		c.block(s.Stmts)
	case *ast.IfStmt:
		c.expr(s.Condition)
		c.block(s.Then)
		c.block(s.Else)
	case *ast.WhileStmt:
		c.expr(s.Condition)
		calls := c.redisCalls
		c.block(s.Stmts)
		if isConstTrue(s.Condition) && c.redisCalls > calls {
			c.report(c.pos.atStmt(s), RuleUnboundedLoop,
				"while %s loop calls redis.call and only a break can end it; Redis serves no one else while the script runs, so bound it with a counter (for i = 1, max_iterations do ... end)",
				render(s.Condition))
		}
	case *ast.RepeatStmt:
		calls := c.redisCalls
		// The until condition sees the body's locals.
		c.push()
		c.stmts(s.Stmts)
		c.expr(s.Condition)
		c.pop()
		if isConstFalse(s.Condition) && c.redisCalls > calls {
			c.report(c.pos.atStmt(s), RuleUnboundedLoop,
				"repeat ... until %s loop calls redis.call and only a break can end it; Redis serves no one else while the script runs, so bound it with a counter (for i = 1, max_iterations do ... end)",
				render(s.Condition))
		}
	case *ast.NumberForStmt:
		c.numberFor(s)
	case *ast.GenericForStmt:
		c.genericFor(s)
	case *ast.FuncDefStmt:
		c.funcDef(s)
	case *ast.ReturnStmt:
		c.exprList(s.Exprs, 0)
	}
}

// assign handles `a, b.c, d[e] = ...`: plain names that are not locals are
// global writes.
func (c *checker) assign(s *ast.AssignStmt) {
	for _, lhs := range s.Lhs {
		if target, ok := lhs.(*ast.AttrGetExpr); ok {
			c.expr(target.Object)
			c.expr(target.Key)
		}
	}
	vals := c.exprList(s.Rhs, len(s.Lhs))
	for i, lhs := range s.Lhs {
		name, ok := lhs.(*ast.IdentExpr)
		if !ok {
			continue
		}
		if v := c.local(name.Value); v != nil {
			*v = vals[i]
			continue
		}
		c.report(c.pos.at(name), RuleGlobalWrite,
			"assignment to global %q; Redis refuses scripts that create or change globals, so declare it with 'local %s'",
			name.Value, name.Value)
	}
}

func (c *checker) funcDef(s *ast.FuncDefStmt) {
	if s.Name.Func == nil {
		// function obj:method() gets an implicit self.
		c.expr(s.Name.Receiver)
		c.function(s.Func, true)
		return
	}
	if name, ok := s.Name.Func.(*ast.IdentExpr); ok && c.local(name.Value) == nil {
		c.report(c.pos.at(name), RuleGlobalWrite,
			"global function %q; Redis refuses scripts that create globals, so declare it with 'local function %s(...)'",
			name.Value, name.Value)
	} else if target, ok := s.Name.Func.(*ast.AttrGetExpr); ok {
		c.expr(target.Object)
	}
	c.function(s.Func, false)
}

// function walks a function body in its own scope; parameters are unknown,
// since the linter does not follow values through calls.
func (c *checker) function(f *ast.FunctionExpr, method bool) {
	c.push()
	if method {
		c.declare("self", value{name: "self"})
	}
	for _, n := range f.ParList.Names {
		c.declare(n, value{name: n})
	}
	c.stmts(f.Stmts)
	c.pop()
}

func (c *checker) numberFor(s *ast.NumberForStmt) {
	c.expr(s.Init)
	limit := c.expr(s.Limit)
	c.expr(s.Step)
	calls := c.redisCalls
	c.push()
	c.declare(s.Name, value{origin: fromLoop, name: s.Name})
	c.stmts(s.Stmts)
	c.pop()
	if limit.grows != "" && c.redisCalls > calls {
		c.report(c.pos.atStmt(s), RuleUnboundedLoop,
			"for loop up to the size of %s calls redis.call once per element; that reply grows with the data, so bound it (ZRANGE key 0 N-1, ZRANGEBYSCORE ... LIMIT 0 N) and let the client call again for the rest",
			limit.grows)
	}
}

func (c *checker) genericFor(s *ast.GenericForStmt) {
	over := c.iterated(s.Exprs)
	calls := c.redisCalls
	c.push()
	for i, name := range s.Names {
		v := value{origin: fromLoop, name: name}
		// The value variable of ipairs(KEYS) (or of a list of KEYS entries)
		// is a declared key, and of ipairs(ARGV) an argument; the index
		// variable is neither.
		if i == 1 && len(s.Names) > 1 {
			switch over.origin {
			case keysTable:
				v = value{origin: fromKeys, name: "KEYS[" + s.Names[0] + "]"}
			case argvTable:
				v = value{origin: fromArgv, name: "ARGV[" + s.Names[0] + "]"}
			case keyList:
				v = value{origin: fromKeys, name: clip(over.name + "[" + s.Names[0] + "]")}
			}
		}
		c.declare(name, v)
	}
	c.stmts(s.Stmts)
	c.pop()
	if over.grows != "" && c.redisCalls > calls {
		c.report(c.pos.atStmt(s), RuleUnboundedLoop,
			"for loop over the reply of %s calls redis.call once per element; that reply grows with the data, so bound it (ZRANGE key 0 N-1, ZRANGEBYSCORE ... LIMIT 0 N) and let the client call again for the rest",
			over.grows)
	}
}

// iterated walks a generic for's explist and returns the table iterated
// when it is ipairs(t) or pairs(t).
func (c *checker) iterated(exprs []ast.Expr) value {
	var over value
	for i, e := range exprs {
		if call, ok := e.(*ast.FuncCallExpr); ok && i == 0 && len(call.Args) > 0 && c.isPairs(call.Func) {
			over = c.exprList(call.Args, 0)[0]
			continue
		}
		c.expr(e)
	}
	return over
}

// isPairs reports whether fn is Lua's own ipairs or pairs.
func (c *checker) isPairs(fn ast.Expr) bool {
	name, ok := fn.(*ast.IdentExpr)
	return ok && (name.Value == "ipairs" || name.Value == "pairs") && c.local(name.Value) == nil
}

// exprList evaluates expressions left to right and returns at least n values
// (missing ones unknown), the way Lua adjusts an explist.
func (c *checker) exprList(es []ast.Expr, n int) []value {
	vals := make([]value, max(n, len(es)))
	for i, e := range es {
		vals[i] = c.expr(e)
	}
	return vals
}

func (c *checker) ident(e *ast.IdentExpr) value {
	if v := c.local(e.Value); v != nil {
		return *v
	}
	switch e.Value {
	case "KEYS":
		return value{origin: keysTable, name: "KEYS"}
	case "ARGV":
		return value{origin: argvTable, name: "ARGV"}
	case "redis", "math", "tonumber":
		return value{origin: builtin, name: e.Value}
	}
	return value{name: e.Value}
}

// index resolves t[k] from what t and k hold.
func (c *checker) index(t value, key ast.Expr, k value) value {
	keyName := k.name
	if s, ok := key.(*ast.StringExpr); ok {
		keyName = s.Value
	}
	switch {
	case t.origin == keysTable:
		return value{origin: fromKeys, name: clip("KEYS[" + k.name + "]")}
	case t.origin == argvTable:
		return value{origin: fromArgv, name: clip("ARGV[" + k.name + "]")}
	case t.origin == keyList:
		return value{origin: fromKeys, name: clip(t.name + "[" + k.name + "]")}
	case t.origin == builtin && t.name == "redis" && (keyName == "call" || keyName == "pcall"):
		return value{origin: builtin, name: "redis." + keyName}
	case t.origin == builtin && t.name == "math" && keyName == "random":
		return value{origin: builtin, name: "math.random"}
	}
	if _, ok := key.(*ast.StringExpr); ok && isName(keyName) {
		return value{name: clip(t.name + "." + keyName)}
	}
	return value{name: clip(t.name + "[" + k.name + "]")}
}

// expr walks an expression, runs the checks that apply to it, and returns
// what it evaluates to.
func (c *checker) expr(e ast.Expr) value {
	switch e := e.(type) {
	case *ast.IdentExpr:
		return c.ident(e)
	case *ast.StringExpr:
		return value{origin: fromString, name: luaQuote(e.Value)}
	case *ast.NumberExpr:
		return value{origin: fromNumber, name: e.Value}
	case *ast.AttrGetExpr:
		v := c.index(c.expr(e.Object), e.Key, c.expr(e.Key))
		if v.origin == builtin && v.name == "math.random" {
			c.report(c.pos.at(e), RuleNondeterministic, "%s", nondeterministicMessage("math.random", "randomness"))
		}
		return v
	case *ast.FuncCallExpr:
		return c.call(e)
	case *ast.StringConcatOpExpr:
		l, r := c.expr(e.Lhs), c.expr(e.Rhs)
		return value{origin: fromConcat, name: clip(l.name + " .. " + r.name)}
	case *ast.ArithmeticOpExpr:
		// A count derived from a growing reply (#reply - 1) grows with it.
		l, r := c.arithmetic(e.Lhs, e.Operator), c.arithmetic(e.Rhs, e.Operator)
		return value{origin: fromNumber, name: render(e), grows: cmp.Or(l.grows, r.grows)}
	case *ast.UnaryMinusOpExpr:
		c.arithmetic(e.Expr, "unary -")
		return value{origin: fromNumber, name: render(e)}
	case *ast.UnaryLenOpExpr:
		return value{origin: fromNumber, name: render(e), grows: c.expr(e.Expr).grows}
	case *ast.UnaryNotOpExpr:
		c.expr(e.Expr)
	case *ast.RelationalOpExpr:
		if strings.ContainsAny(e.Operator, "<>") {
			c.comparison(e.Lhs, e.Operator)
			c.comparison(e.Rhs, e.Operator)
		} else {
			c.expr(e.Lhs)
			c.expr(e.Rhs)
		}
	case *ast.LogicalOpExpr:
		// `tonumber(ARGV[1]) or 10` is still a number; mixed origins are not
		// followed.
		l, r := c.expr(e.Lhs), c.expr(e.Rhs)
		if l.origin == r.origin && l.origin != builtin {
			return value{origin: l.origin, name: render(e)}
		}
	case *ast.TableExpr:
		// {KEYS[1], KEYS[2]} is a list of declared keys; iterating it or
		// indexing it gives declared keys.
		onlyKeys := len(e.Fields) > 0
		for _, f := range e.Fields {
			c.expr(f.Key)
			v := c.expr(f.Value)
			onlyKeys = onlyKeys && f.Key == nil && v.origin == fromKeys
		}
		if onlyKeys {
			return value{origin: keyList, name: render(e)}
		}
	case *ast.FunctionExpr:
		c.function(e, false)
	case nil:
		return value{}
	}
	return value{name: render(e)}
}

// call walks a function call; redis.call and friends get their checks.
func (c *checker) call(e *ast.FuncCallExpr) value {
	if e.Func == nil {
		c.expr(e.Receiver)
		c.exprList(e.Args, 0)
		return value{name: render(e)}
	}
	fn := c.expr(e.Func)
	if fn.origin == builtin && (fn.name == "redis.call" || fn.name == "redis.pcall") {
		return c.redisCall(e, fn.name)
	}
	c.exprList(e.Args, 0)
	if fn.origin == builtin && fn.name == "tonumber" {
		return value{origin: fromNumber, name: render(e)}
	}
	return value{name: render(e)}
}

// arithmetic walks an operand of + - * / % ^ or unary minus.
func (c *checker) arithmetic(operand ast.Expr, op string) value {
	v := c.expr(operand)
	if v.origin == fromArgv {
		c.report(c.pos.at(operand), RuleArgvNumber,
			"%s is a string used in arithmetic (%s): Lua converts it silently, and a value that is not a number fails with an obscure error mid-script; convert it once with tonumber (local n = tonumber(%s)) and check the result",
			describe(operand, v), op, v.name)
	}
	return v
}

// comparison walks an operand of < <= > >=.
func (c *checker) comparison(operand ast.Expr, op string) {
	if v := c.expr(operand); v.origin == fromArgv {
		c.report(c.pos.at(operand), RuleArgvNumber,
			"%s is a string compared with %s: against a number Lua raises an error, against another string it compares as text ('10' < '9'); compare tonumber(%s) instead",
			describe(operand, v), op, v.name)
	}
}

// isConstTrue reports whether a loop condition is a constant truthy value.
func isConstTrue(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.TrueExpr, *ast.NumberExpr, *ast.StringExpr:
		return true
	case *ast.UnaryNotOpExpr:
		return isConstFalse(e.Expr)
	}
	return false
}

// isConstFalse reports whether a condition is constant false or nil.
func isConstFalse(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.FalseExpr, *ast.NilExpr:
		return true
	case *ast.UnaryNotOpExpr:
		return isConstTrue(e.Expr)
	}
	return false
}

// firstNonBlank returns the 1-based column of the first character on a line
// that is not a space or tab, or 1.
func firstNonBlank(lines []string, line int) int {
	if line < 1 || line > len(lines) {
		return 1
	}
	if i := strings.IndexFunc(lines[line-1], func(r rune) bool { return r != ' ' && r != '\t' }); i >= 0 {
		return i + 1
	}
	return 1
}
