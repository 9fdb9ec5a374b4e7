package lint

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/limitctl/limitctl/internal/lint/source"
)

// checker walks a parsed script once, tracking what each local holds, and
// collects diagnostics. The data flow is deliberately simple: a local holds
// the value of its most recent assignment in source order, branches and loops
// included, and function parameters hold unknown values.
type checker struct {
	file  string
	lines []string
	pos   *source.Positions
	scope *scope
	diags []Diagnostic

	// redisCalls counts redis.call/pcall sites walked so far, so a loop can
	// tell whether its body made any.
	redisCalls int
	// unit is the script, or in a Function library the registered function
	// being walked: each has its own keys, TTLs and flags.
	unit *unit
	// library is set for a Function library (#!lua name=...); callbacks are
	// its registered functions, found before the walk.
	library   bool
	callbacks map[*ast.FunctionExpr]callback
	// fn is the function whose body is being walked (nil at the top level).
	fn *funcInfo
	// resp3 is set once the script calls redis.setresp: reply types are no
	// longer certain after it.
	resp3 bool
	// registrations counts calls of redis.register_function, wherever they are.
	registrations int
	// callee is the function expression of the call being walked, so that
	// redis.call at a library's top level is reported once, as a call.
	callee ast.Expr
}

// unit is what missing-expire and readonly-write judge together: a script,
// or one registered function of a library.
type unit struct {
	name     string // a registered function's name, for messages
	noWrites bool
	writes   []keyWrite
	expired  map[string]bool
	// expiredSomeKey: a TTL on a KEYS entry the linter can name; expiredKeys:
	// on a KEYS entry it cannot tell (KEYS[i]), which could be any declared
	// key; expiredAny: on a key it cannot name at all (a call result, a
	// parameter no call resolves), which could be any key.
	expiredSomeKey, expiredKeys, expiredAny bool
}

func newUnit(noWrites bool) *unit { return &unit{noWrites: noWrites, expired: map[string]bool{}} }

// funcInfo is what a local function does with its parameters, applied at
// each call: `local function touch(k) redis.call('PEXPIRE', k, 10) end`
// gives a TTL to whatever touch(KEYS[1]) passes.
type funcInfo struct {
	unit         *unit
	paramExpires map[int]bool
	paramWrites  []paramWrite
	// writes is the first write command the body (or a function it calls)
	// runs, for readonly-write at a call from a no-writes function.
	writes string
}

type paramWrite struct {
	index int
	cmd   string
}

// scope is one block's locals; lookups climb to the enclosing blocks.
type scope struct {
	parent *scope
	depth  int
	vars   map[string]*value
}

func (c *checker) push() {
	depth := 0
	if c.scope != nil {
		depth = c.scope.depth + 1
	}
	c.scope = &scope{parent: c.scope, depth: depth, vars: map[string]*value{}}
}
func (c *checker) pop() { c.scope = c.scope.parent }

func (c *checker) declare(name string, v value) {
	c.scope.vars[name] = &v
}

// local returns the variable a name refers to, or nil for a global.
func (c *checker) local(name string) *value {
	v, _ := c.lookup(name)
	return v
}

// lookup returns a local and the depth of the block that declared it.
func (c *checker) lookup(name string) (*value, int) {
	for s := c.scope; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, s.depth
		}
	}
	return nil, 0
}

// report adds a diagnostic at a position, falling back to the first non-blank column
// of the line when the token's column is unknown.
func (c *checker) report(at source.Pos, rule, format string, args ...any) {
	line := max(at.Line, 1)
	col := at.Col
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
		if c.redisCalls == calls {
			break
		}
		if isConstTrue(s.Condition) {
			c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
				"while %s loop calls redis.call and only a break can end it; Redis serves no one else while the script runs, so bound it with a counter (for i = 1, max_iterations do ... end)",
				render(s.Condition))
		} else if dep := c.dataBound(s.Condition, false); dep != "" {
			c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
				"while loop calls redis.call for as long as %s holds, and that depends on %s, which grows with the data; Redis serves no one else while the script runs, so also bound it with a counter (while n < max_iterations and ...) and let the client call again for the rest",
				render(s.Condition), dep)
		}
	case *ast.RepeatStmt:
		calls := c.redisCalls
		// The until condition sees the body's locals, as they are after the body.
		c.push()
		c.stmts(s.Stmts)
		c.expr(s.Condition)
		dep := c.dataBound(s.Condition, true)
		c.pop()
		if c.redisCalls == calls {
			break
		}
		if isConstFalse(s.Condition) {
			c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
				"repeat ... until %s loop calls redis.call and only a break can end it; Redis serves no one else while the script runs, so bound it with a counter (for i = 1, max_iterations do ... end)",
				render(s.Condition))
		} else if dep != "" {
			c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
				"repeat ... until %s loop calls redis.call until %s says so, which grows with the data (a SCAN cursor returns to 0 only after the whole keyspace); Redis serves no one else while the script runs, so also bound it with a counter (until ... or n >= max_iterations) and let the client call again for the rest",
				render(s.Condition), dep)
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
		if v, depth := c.lookup(name.Value); v != nil {
			// Assigned in a branch or loop body: after it, the local may hold
			// either value.
			if c.scope.depth > depth {
				*v = merge(*v, vals[i])
			} else {
				*v = vals[i]
			}
			continue
		}
		c.report(c.pos.At(name), RuleGlobalWrite,
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
		c.report(c.pos.At(name), RuleGlobalWrite,
			"global function %q; Redis refuses scripts that create globals, so declare it with 'local function %s(...)'",
			name.Value, name.Value)
	} else if target, ok := s.Name.Func.(*ast.AttrGetExpr); ok {
		c.expr(target.Object)
	}
	c.function(s.Func, false)
}

// localCall applies what a local function does with its parameters to the
// arguments of one call.
func (c *checker) localCall(e *ast.FuncCallExpr, info *funcInfo, args []value) {
	for i := range info.paramExpires {
		if i < len(args) {
			c.expire(args[i])
		}
	}
	for _, w := range info.paramWrites {
		if w.index < len(args) {
			c.write(w.cmd, e.Args[w.index], args[w.index])
		}
	}
	if info.writes == "" {
		return
	}
	if c.fn != nil && c.fn.writes == "" {
		c.fn.writes = info.writes
	}
	if c.unit.noWrites && info.unit != c.unit {
		c.report(c.pos.At(e), RuleReadonlyWrite,
			"%s runs %s, a write command, but this %s is flagged no-writes, so Redis refuses the call at run time (Write commands are not allowed from read-only scripts); drop the flag or the write",
			render(e.Func), info.writes, c.unitKind())
	}
}

// unitKind names the unit being walked, for messages.
func (c *checker) unitKind() string {
	switch {
	case !c.library:
		return "script"
	case c.unit.name != "":
		return "function " + luaQuote(c.unit.name)
	}
	return "function"
}

// function walks a function body in its own scope. A parameter is followed
// through the calls of the function (what the body does to it happens to the
// caller's argument); a registered function of a library gets KEYS and ARGV
// as its first two parameters and is a unit of its own.
func (c *checker) function(f *ast.FunctionExpr, method bool) *funcInfo {
	info := &funcInfo{unit: c.unit, paramExpires: map[int]bool{}}
	outerFn, outerUnit := c.fn, c.unit
	cb, registered := c.callbacks[f]
	if registered {
		c.unit = newUnit(cb.noWrites)
		c.unit.name = cb.name
		info.unit = c.unit
	}
	c.fn = info
	c.push()
	if method {
		c.declare("self", value{name: "self"})
	}
	for i, n := range f.ParList.Names {
		switch {
		case registered && i == 0:
			c.declare(n, value{origin: keysTable, name: "KEYS"})
		case registered && i == 1:
			c.declare(n, value{origin: argvTable, name: "ARGV"})
		default:
			c.declare(n, value{origin: fromParam, name: n, fn: info, param: i})
		}
	}
	c.stmts(f.Stmts)
	c.pop()
	if registered {
		c.missingExpire(c.unit)
	}
	c.fn, c.unit = outerFn, outerUnit
	if outerFn != nil && outerFn.writes == "" {
		outerFn.writes = info.writes
	}
	return info
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
		c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
			"for loop up to the size of %s calls redis.call once per element; that reply grows with the data, so bound it (ZRANGE key 0 N-1, ZRANGEBYSCORE ... LIMIT 0 N) and let the client call again for the rest",
			limit.grows)
	} else if limit.reply != "" && c.redisCalls > calls {
		c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
			"for loop up to %s, a number read from the reply of %s, calls redis.call once per step; the data sets the bound, so cap it (math.min(n, max_iterations)) and let the client call again for the rest",
			render(s.Limit), limit.reply)
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
				v = value{origin: fromKeys, name: clip(over.name + "[" + s.Names[0] + "]"), members: over.members}
			case fromReply:
				v = value{origin: fromReply, name: clip(over.name + "[" + s.Names[0] + "]"), reply: over.reply}
			}
		}
		c.declare(name, v)
	}
	c.stmts(s.Stmts)
	c.pop()
	if over.grows != "" && c.redisCalls > calls {
		c.report(c.pos.AtStmt(s), RuleUnboundedLoop,
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
			c.expr(call.Func) // a library's top level has no pairs
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
	case "KEYS", "ARGV":
		if c.library {
			c.report(c.pos.At(e), RuleLibrary,
				"%s is not a global in a Function library (Redis: Script attempted to access nonexistent global variable); a registered function receives the keys and the arguments as its two parameters: function(keys, args) ... keys[1] ... end",
				e.Value)
		}
		if e.Value == "KEYS" {
			return value{origin: keysTable, name: "KEYS"}
		}
		return value{origin: argvTable, name: "ARGV"}
	case "redis", "server":
		return value{origin: builtin, name: e.Value}
	}
	if c.library && c.fn == nil {
		c.report(c.pos.At(e), RuleLibrary,
			"%s does not exist while FUNCTION LOAD runs a library's top level (Redis: Script attempted to access nonexistent global variable '%s'): only redis.register_function, redis.log and redis.REDIS_VERSION do there, so Redis refuses the library; use %s inside a function",
			e.Value, e.Value, e.Value)
	}
	switch e.Value {
	case "math", "tonumber", "unpack", "table":
		return value{origin: builtin, name: e.Value}
	}
	return value{name: e.Value}
}

// libraryLoadAPI is what FUNCTION LOAD offers a library's top level of the
// redis table (checked on redis-server 7.0); everything else, the Lua
// standard library included, exists only inside a called function.
var libraryLoadAPI = map[string]bool{
	"register_function": true, "log": true, "LOG_DEBUG": true, "LOG_VERBOSE": true, "LOG_NOTICE": true,
	"LOG_WARNING": true, "REDIS_VERSION": true, "REDIS_VERSION_NUM": true,
}

// loadTimeField reports redis.X read at a library's top level when FUNCTION
// LOAD does not offer X there: `local rcall = redis.call` fails the load.
func (c *checker) loadTimeField(e *ast.AttrGetExpr) {
	if !c.library || c.fn != nil {
		return
	}
	obj, ok := e.Object.(*ast.IdentExpr)
	key, ok2 := e.Key.(*ast.StringExpr)
	if !ok || !ok2 || c.local(obj.Value) != nil || (obj.Value != "redis" && obj.Value != "server") || libraryLoadAPI[key.Value] {
		return
	}
	if e == c.callee && (key.Value == "call" || key.Value == "pcall") {
		return // redisCall reports the call itself
	}
	c.report(c.pos.At(e), RuleLibrary,
		"%s.%s does not exist while FUNCTION LOAD runs a library's top level (Redis: Script attempted to access nonexistent global variable '%s'): only redis.register_function, redis.log and redis.REDIS_VERSION do there, so Redis refuses the library; use it inside a function",
		obj.Value, key.Value, key.Value)
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
		return value{origin: fromArgv, name: clip("ARGV[" + k.name + "]"), typ: stringType, typWhy: "ARGV, always a string"}
	case t.origin == keyList:
		return value{origin: fromKeys, name: clip(t.name + "[" + k.name + "]"), members: t.members}
	case t.origin == fromReply:
		return value{origin: fromReply, name: clip(t.name + "[" + k.name + "]"), reply: t.reply}
	case t.origin == builtin && (t.name == "redis" || t.name == "server") &&
		(keyName == "call" || keyName == "pcall" || keyName == "register_function" || keyName == "setresp"):
		return value{origin: builtin, name: t.name + "." + keyName}
	case t.origin == builtin && t.name == "math" && keyName == "random":
		return value{origin: builtin, name: "math.random"}
	case t.origin == builtin && t.name == "table" && keyName == "unpack":
		return value{origin: builtin, name: "unpack"}
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
		return value{origin: fromString, name: luaQuote(e.Value), typ: stringType, typWhy: "a string literal"}
	case *ast.NumberExpr:
		return value{origin: fromNumber, name: e.Value, typ: numberType, typWhy: "a number"}
	case *ast.AttrGetExpr:
		v := c.index(c.expr(e.Object), e.Key, c.expr(e.Key))
		c.loadTimeField(e)
		if v.origin == builtin && v.name == "math.random" {
			c.report(c.pos.At(e), RuleNondeterministic, "%s", nondeterministicMessage("math.random", "randomness"))
		}
		return v
	case *ast.FuncCallExpr:
		return c.call(e)
	case *ast.StringConcatOpExpr:
		l, r := c.expr(e.Lhs), c.expr(e.Rhs)
		return value{origin: fromConcat, name: clip(l.name + " .. " + r.name), typ: stringType, typWhy: "a concatenation",
			reply: cmp.Or(l.reply, r.reply)}
	case *ast.ArithmeticOpExpr:
		// A count derived from a growing reply (#reply - 1) grows with it.
		l, r := c.arithmetic(e.Lhs, e.Operator), c.arithmetic(e.Rhs, e.Operator)
		return value{origin: fromNumber, name: render(e), grows: cmp.Or(l.grows, r.grows), reply: cmp.Or(l.reply, r.reply),
			typ: numberType, typWhy: "arithmetic"}
	case *ast.UnaryMinusOpExpr:
		v := c.arithmetic(e.Expr, "unary -")
		return value{origin: fromNumber, name: render(e), reply: v.reply, typ: numberType, typWhy: "arithmetic"}
	case *ast.UnaryLenOpExpr:
		v := c.expr(e.Expr)
		// The length of a reply grows only if the reply does.
		return value{origin: fromNumber, name: render(e), grows: v.grows, typ: numberType, typWhy: "a length"}
	case *ast.UnaryNotOpExpr:
		v := c.expr(e.Expr)
		return value{name: render(e), reply: v.reply, grows: v.grows}
	case *ast.RelationalOpExpr:
		l, r := c.expr(e.Lhs), c.expr(e.Rhs)
		c.relational(e, l, r)
		return value{name: render(e), reply: cmp.Or(l.reply, r.reply), grows: cmp.Or(l.grows, r.grows)}
	case *ast.LogicalOpExpr:
		// `tonumber(ARGV[1]) or 10` is still a number; mixed origins are not
		// followed.
		l, r := c.expr(e.Lhs), c.expr(e.Rhs)
		v := value{name: render(e), reply: cmp.Or(l.reply, r.reply), grows: cmp.Or(l.grows, r.grows)}
		if l.origin == r.origin && l.origin != builtin {
			v.origin = l.origin
		}
		if l.typ == r.typ {
			v.typ, v.typWhy = l.typ, l.typWhy
		}
		return v
	case *ast.TableExpr:
		// {KEYS[1], KEYS[2]} is a list of declared keys; iterating it or
		// indexing it gives declared keys.
		onlyKeys := len(e.Fields) > 0
		var members []string
		for _, f := range e.Fields {
			c.expr(f.Key)
			v := c.expr(f.Value)
			onlyKeys = onlyKeys && f.Key == nil && v.origin == fromKeys
			if len(v.members) > 0 {
				members = append(members, v.members...)
			} else {
				members = append(members, v.name)
			}
		}
		if onlyKeys {
			return value{origin: keyList, name: render(e), members: members}
		}
	case *ast.FunctionExpr:
		return value{origin: localFunc, name: "function", fn: c.function(e, false)}
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
	outer := c.callee
	c.callee = e.Func
	fn := c.expr(e.Func)
	c.callee = outer
	if fn.origin == builtin {
		switch fn.name {
		case "redis.call", "redis.pcall", "server.call", "server.pcall":
			return c.redisCall(e, fn.name)
		case "redis.setresp", "server.setresp":
			c.resp3 = true
		case "redis.register_function", "server.register_function":
			c.registrations++
			if !c.library {
				c.report(c.pos.At(e), RuleLibrary,
					"%s exists only while FUNCTION LOAD loads a library that starts with '#!lua name=mylib'; EVAL has no such function, and FUNCTION LOAD refuses a file without that line",
					fn.name)
			}
		}
	}
	args := c.exprList(e.Args, 0)
	if fn.origin == localFunc && fn.fn != nil {
		c.localCall(e, fn.fn, args)
	}
	if fn.origin == builtin && len(args) > 0 {
		switch fn.name {
		case "tonumber":
			return value{origin: fromNumber, name: render(e), reply: args[0].reply, grows: args[0].grows,
				typ: numberType, typWhy: "tonumber(...)"}
		case "unpack":
			// unpack(t) passes t's elements as arguments.
			switch args[0].origin {
			case keysTable:
				return value{origin: fromKeys, name: "KEYS[?]"}
			case argvTable:
				return value{origin: fromArgv, name: "ARGV[?]", typ: stringType, typWhy: "ARGV, always a string"}
			case fromReply:
				return value{origin: fromReply, name: render(e), reply: args[0].reply}
			}
		}
	}
	return value{name: render(e)}
}

// arithmetic walks an operand of + - * / % ^ or unary minus.
func (c *checker) arithmetic(operand ast.Expr, op string) value {
	v := c.expr(operand)
	if v.origin == fromArgv {
		c.report(c.pos.At(operand), RuleArgvNumber,
			"%s is a string used in arithmetic (%s): Lua converts it silently, and a value that is not a number fails with an obscure error mid-script; convert it once with tonumber (local n = tonumber(%s)) and check the result",
			describe(operand, v), op, v.name)
	}
	return v
}

// relational checks a comparison whose operands evaluated to l and r. Lua
// never converts between numbers and strings when it compares: == between
// them is always false, ~= always true, and an ordering raises an error.
func (c *checker) relational(e *ast.RelationalOpExpr, l, r value) {
	ordering := strings.ContainsAny(e.Operator, "<>")
	if (l.typ == numberType && r.typ == stringType) || (l.typ == stringType && r.typ == numberType) {
		numE, num, strE, str := e.Lhs, l, e.Rhs, r
		if l.typ == stringType {
			numE, num, strE, str = e.Rhs, r, e.Lhs, l
		}
		fix := "convert the string side with tonumber"
		if str.origin == fromArgv {
			fix = "compare with tonumber(" + render(strE) + ")"
		}
		switch {
		case ordering:
			// Quoted as written: ARGV[1] < 10 stays ARGV[1] < 10.
			c.report(c.pos.At(e.Lhs), RuleReplyType,
				"%s (%s) %s %s (%s) raises an 'attempt to compare' error at run time: Lua never converts between them in a comparison; %s",
				render(e.Lhs), l.typWhy, e.Operator, render(e.Rhs), r.typWhy, fix)
		case e.Operator == "==":
			c.report(c.pos.At(e.Lhs), RuleReplyType,
				"%s == %s is always false: %s is %s and %s is %s, and Lua's == never converts between numbers and strings, so what it guards never happens; %s",
				render(e.Lhs), render(e.Rhs), render(numE), num.typWhy, render(strE), str.typWhy, fix)
		default:
			c.report(c.pos.At(e.Lhs), RuleReplyType,
				"%s ~= %s is always true: %s is %s and %s is %s, and Lua's ~= never converts between numbers and strings; %s",
				render(e.Lhs), render(e.Rhs), render(numE), num.typWhy, render(strE), str.typWhy, fix)
		}
		return
	}
	if !ordering {
		return
	}
	for _, side := range []struct {
		e ast.Expr
		v value
	}{{e.Lhs, l}, {e.Rhs, r}} {
		if side.v.origin == fromArgv {
			c.report(c.pos.At(side.e), RuleArgvNumber,
				"%s is a string compared with %s: against a number Lua raises an error, against another string it compares as text ('10' < '9'); compare tonumber(%s) instead",
				describe(side.e, side.v), e.Operator, side.v.name)
		}
	}
}

// dataBound returns what a loop condition depends on that grows with the
// data (a reply, its length), or "" when the condition can end the loop
// without it. endsWhenTrue is true for repeat's until, false for while.
// `until done or n >= max` ends once n does, however the reply goes.
func (c *checker) dataBound(cond ast.Expr, endsWhenTrue bool) string {
	switch e := cond.(type) {
	case *ast.LogicalOpExpr:
		l, r := c.dataBound(e.Lhs, endsWhenTrue), c.dataBound(e.Rhs, endsWhenTrue)
		// The loop stops as soon as one side lets it: `and` for while,
		// `or` for until. Then one side that counts to a bound bounds it;
		// a flag (`until found or cursor == '0'`) or a constant does not,
		// since nothing says it ever flips before the data runs out.
		if (e.Operator == "and") != endsWhenTrue {
			if (l == "" && isCounterBound(e.Lhs)) || (r == "" && isCounterBound(e.Rhs)) {
				return ""
			}
		}
		return cmp.Or(l, r)
	case *ast.UnaryNotOpExpr:
		return c.dataBound(e.Expr, !endsWhenTrue)
	}
	return c.dependsOn(cond)
}

// isCounterBound reports whether a part of a loop condition compares in
// order (n >= max, i < 100), the shape of a counter that ends the loop; an
// equality or a flag may never change.
func isCounterBound(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.RelationalOpExpr:
		return strings.ContainsAny(e.Operator, "<>")
	case *ast.LogicalOpExpr:
		return isCounterBound(e.Lhs) || isCounterBound(e.Rhs)
	case *ast.UnaryNotOpExpr:
		return isCounterBound(e.Expr)
	}
	return false
}

// growsOf names the growing reply a local holds, or "".
func (c *checker) growsOf(e ast.Expr) string {
	if id, ok := e.(*ast.IdentExpr); ok {
		if v := c.local(id.Value); v != nil && v.grows != "" {
			return "the size of " + v.grows
		}
	}
	return ""
}

// dependsOn names the reply an expression reads, as its locals are now,
// without reporting anything.
func (c *checker) dependsOn(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.IdentExpr:
		if v := c.local(e.Value); v != nil {
			if v.grows != "" {
				return "the size of " + v.grows
			}
			if v.reply != "" {
				return "the reply of " + v.reply
			}
		}
	case *ast.FuncCallExpr:
		if fn, ok := e.Func.(*ast.AttrGetExpr); ok {
			if obj, ok := fn.Object.(*ast.IdentExpr); ok && (obj.Value == "redis" || obj.Value == "server") && c.local(obj.Value) == nil {
				return "the reply of " + render(e)
			}
		}
		for _, a := range e.Args {
			if d := c.dependsOn(a); d != "" {
				return d
			}
		}
	case *ast.AttrGetExpr:
		// page[1] is a value from the data; items[i] walks a reply, which
		// ends when a reply that does not grow ends.
		switch e.Key.(type) {
		case *ast.StringExpr, *ast.NumberExpr:
			return c.dependsOn(e.Object)
		}
		return cmp.Or(c.growsOf(e.Object), c.dependsOn(e.Key))
	case *ast.UnaryLenOpExpr:
		return c.growsOf(e.Expr)
	case *ast.UnaryMinusOpExpr:
		return c.dependsOn(e.Expr)
	case *ast.UnaryNotOpExpr:
		return c.dependsOn(e.Expr)
	case *ast.RelationalOpExpr:
		return cmp.Or(c.dependsOn(e.Lhs), c.dependsOn(e.Rhs))
	case *ast.ArithmeticOpExpr:
		return cmp.Or(c.dependsOn(e.Lhs), c.dependsOn(e.Rhs))
	case *ast.StringConcatOpExpr:
		return cmp.Or(c.dependsOn(e.Lhs), c.dependsOn(e.Rhs))
	case *ast.LogicalOpExpr:
		return cmp.Or(c.dependsOn(e.Lhs), c.dependsOn(e.Rhs))
	}
	return ""
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
