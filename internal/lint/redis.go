package lint

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"

	"github.com/limitctl/limitctl/internal/lint/source"
)

// keyWrite is a key some command writes, kept until the whole script has
// been seen and missing-expire can tell whether it ever gets a TTL.
type keyWrite struct {
	name    string // resolved key, the identity TTLs are matched on
	keys    bool   // a declared key (from KEYS)
	anyKey  bool   // a declared key the linter cannot tell apart (KEYS[i])
	source  string // the key as written at the call
	display string
	command string
	at      source.Pos
}

// redisCall checks one redis.call or redis.pcall. Only a literal command
// name is checked: with a computed one the linter cannot know the keys.
func (c *checker) redisCall(e *ast.FuncCallExpr, fn string) value {
	c.redisCalls++
	args := c.exprList(e.Args, 0)
	reply := value{origin: fromReply, name: render(e), reply: fn}
	at := c.pos.At(e)
	if c.library && c.fn == nil {
		c.report(at, RuleLibrary,
			"%s at the top of a Function library runs while FUNCTION LOAD loads it, where %s does not exist, so Redis refuses the library; call it inside a registered function",
			fn, fn)
	}
	if len(e.Args) == 0 {
		return reply
	}
	literal, ok := e.Args[0].(*ast.StringExpr)
	if !ok {
		return reply
	}
	cmd := strings.ToUpper(literal.Value)
	reply.reply = cmd
	if c.unit.noWrites && refusedInReadOnly[cmd] {
		c.report(at, RuleReadonlyWrite,
			"%s is a write command, but this %s is flagged no-writes, so Redis refuses it at run time (Write commands are not allowed from read-only scripts); drop the flag or the write",
			cmd, c.unitKind())
	}
	if c.fn != nil && c.fn.writes == "" && refusedInReadOnly[cmd] {
		c.fn.writes = cmd
	}
	// A pcall may answer an error table, and under RESP3 replies change
	// shape (a ZSCORE is a double): the reply's type is then not certain.
	switch {
	case strings.HasSuffix(fn, ".pcall") || c.resp3:
	case integerReplyCommands[cmd] && !(cmd == "ZADD" && hasWord(e.Args, "INCR")):
		reply.typ, reply.typWhy = numberType, "the integer reply of "+cmd
	case bulkReplyCommands[cmd] && (!popCommands[cmd] || len(e.Args) == 2) || cmd == "ZADD" && hasWord(e.Args, "INCR"):
		reply.typ, reply.typWhy = stringType, "the reply of "+cmd+", a string or false"
	}
	if cmd == "KEYS" {
		c.report(at, RuleKeysCommand,
			"%s('KEYS', ...) walks the whole keyspace and blocks the server while the script runs; iterate with SCAN from the client, outside the script, or pass the keys the script needs in KEYS",
			fn)
	}
	if pass, ok := nondeterministicCommands[cmd]; ok {
		c.report(at, RuleNondeterministic, "%s", nondeterministicMessage(cmd, pass))
	}
	if spec, ok := keyCommands[cmd]; ok {
		for _, i := range spec.positions(len(e.Args)) {
			c.checkKey(cmd, e.Args[i], args[i])
		}
		c.trackTTL(cmd, spec, e.Args, args)
	}
	reply.grows = growth(cmd, e.Args, reply.name)
	return reply
}

// checkKey reports a key argument that clearly does not come from KEYS.
// Unknown values (parameters, call results) are let through: no guessing.
func (c *checker) checkKey(cmd string, arg ast.Expr, v value) {
	at := c.pos.At(arg)
	what := describe(arg, v)
	switch v.origin {
	case fromArgv:
		c.report(at, RuleUndeclaredKey,
			"%s key %s comes from ARGV; Redis Cluster routes a script by its KEYS only, so pass the key name in KEYS and read it from there (a client library that passes key names in ARGV by design, as StackExchange.Redis's LuaScript turns each @name into ARGV[n], runs on one node or with the keys in KEYS too: silence this line with -- limitctl:ignore undeclared-key)",
			cmd, what)
	case fromConcat:
		c.report(at, RuleUndeclaredKey,
			"%s key %s is built by concatenation, so it is not a key the caller declared (even KEYS[1] .. ':x' names another key, possibly on another Cluster node); build the full name in the client and pass it in KEYS",
			cmd, what)
	case fromLoop:
		c.report(at, RuleUndeclaredKey,
			"%s key %s is a loop variable, not a declared key; pass every key the script touches in KEYS (and iterate over KEYS itself: for _, key in ipairs(KEYS))",
			cmd, what)
	case fromString:
		c.report(at, RuleUndeclaredKey,
			"%s key %s is hard-coded and bypasses KEYS; pass it in KEYS so Redis Cluster can route the script to the key's node",
			cmd, what)
	case fromReply:
		c.report(at, RuleReplyKey,
			"%s key %s comes from the reply of %s rather than from the KEYS table: Redis Cluster accepts it only if it shares the hash slot of the script's keys (a {hash tag} in every name), and the script's work grows with the data; pass the keys in KEYS (the client can read them first), or if the names are hash-tagged, suppress this line",
			cmd, what, v.reply)
	}
}

// trackTTL records which keys a call writes and which it gives a TTL.
func (c *checker) trackTTL(cmd string, spec keySpec, exprs []ast.Expr, vals []value) {
	switch {
	case expireCommands[cmd]:
		if len(vals) > 1 {
			c.expire(vals[1])
		}
	case cmd == "SET":
		if len(exprs) < 2 {
			return
		}
		ttl, known := setTTL(exprs[min(3, len(exprs)):])
		switch {
		case !known:
			// An option the linter cannot read might be EX: stay silent.
		case ttl:
			c.expire(vals[1])
		default:
			c.write(cmd, exprs[1], vals[1])
		}
	case cmd == "GETEX":
		// GETEX key EX 60 gives the key a TTL, as SET ... EX does.
		if len(exprs) > 2 {
			if ttl, _ := setTTL(exprs[2:]); ttl {
				c.expire(vals[1])
			}
		}
	case writeCommands[cmd]:
		for _, i := range spec.positions(len(exprs)) {
			c.write(cmd, exprs[i], vals[i])
		}
	}
}

// resolved reports whether the linter can name the key a value holds, so two
// mentions of it can be matched.
func resolved(v value) bool {
	switch v.origin {
	case fromKeys, fromArgv, fromConcat, fromString:
		return true
	}
	return false
}

// specificKey matches the declared keys the linter can tell apart: KEYS[2],
// not KEYS[i].
var specificKey = regexp.MustCompile(`^KEYS\[[0-9]+\]$`)

// expire records a TTL given to the key v holds, as precisely as the linter
// can tell which key that is: one named key, any declared key (KEYS[i]), a
// parameter (then whatever each call passes), or any key at all. A key read
// from a reply is one the script found in the data, not one it names.
func (c *checker) expire(v value) {
	u := c.unit
	switch {
	case v.origin == fromParam && v.fn != nil:
		v.fn.paramExpires[v.param] = true
	case v.origin == fromKeys && len(v.members) > 0:
		for _, m := range v.members {
			c.expire(value{origin: fromKeys, name: m})
		}
	case v.origin == fromKeys && !specificKey.MatchString(v.name):
		u.expiredKeys = true
	case resolved(v):
		u.expired[v.name] = true
		u.expiredSomeKey = u.expiredSomeKey || v.origin == fromKeys
	case v.origin == fromReply:
	default:
		u.expiredAny = true
	}
}

func (c *checker) write(cmd string, key ast.Expr, v value) {
	if v.origin == fromParam && v.fn != nil {
		v.fn.paramWrites = append(v.fn.paramWrites, paramWrite{v.param, cmd})
		return
	}
	if !resolved(v) {
		return
	}
	if v.origin == fromKeys && len(v.members) > 0 {
		// Each key of the list is written, and needs a TTL of its own.
		for _, m := range v.members {
			c.write(cmd, key, value{origin: fromKeys, name: m})
		}
		return
	}
	c.unit.writes = append(c.unit.writes, keyWrite{
		name:    v.name,
		keys:    v.origin == fromKeys,
		anyKey:  v.origin == fromKeys && !specificKey.MatchString(v.name),
		source:  render(key),
		display: describe(key, v),
		command: cmd,
		at:      c.pos.At(key),
	})
}

// missingExpire reports, once per key at its first write, every key a unit
// writes that nothing in it may give a TTL.
func (c *checker) missingExpire(u *unit) {
	if u.expiredAny {
		return
	}
	reported := map[string]bool{}
	for _, w := range u.writes {
		covered := u.expired[w.name] || w.keys && u.expiredKeys || w.anyKey && u.expiredSomeKey
		if covered || reported[w.name] {
			continue
		}
		reported[w.name] = true
		c.report(w.at, RuleMissingExpire,
			"%s is written by %s but this %s never gives it a TTL, so an abandoned key lives forever; add redis.call('PEXPIRE', %s, ttl_ms) after the write (or write it with SET ... PX ttl_ms), or if the data must persist (a queue, an id counter), disable missing-expire for the project in .limitctl.yaml",
			w.display, w.command, c.unitKind(), w.source)
	}
}

// setTTL reads SET's options. known is false when an option is an expression
// the linter cannot read, since that could be EX.
func setTTL(options []ast.Expr) (ttl, known bool) {
	known = true
	for _, o := range options {
		switch o := o.(type) {
		case *ast.StringExpr:
			if setTTLOptions[strings.ToUpper(o.Value)] {
				return true, true
			}
		case *ast.NumberExpr:
			// an amount such as EX's seconds, not an option
		default:
			known = false
		}
	}
	return false, known
}

// growth describes a reply that grows with the data, or returns "".
func growth(cmd string, args []ast.Expr, call string) string {
	switch {
	case wholeReplyCommands[cmd], countCommands[cmd]:
		return call
	case scoreRangeCommands[cmd]:
		if !hasWord(args, "LIMIT") {
			return call
		}
	case cmd == "ZRANGE" && (hasWord(args, "BYSCORE") || hasWord(args, "BYLEX")):
		if !hasWord(args, "LIMIT") {
			return call
		}
	case indexRangeCommands[cmd] && len(args) > 3:
		// start >= 0 and stop < 0 (0 -1: everything) has no fixed size;
		// two non-negative or two negative indexes bound it.
		start, startOK := literalNumber(args[2])
		stop, stopOK := literalNumber(args[3])
		if startOK && stopOK && start >= 0 && stop < 0 {
			return call
		}
	}
	return ""
}

// hasWord reports whether a string literal argument equals word, ignoring
// case, as Redis does for options.
func hasWord(args []ast.Expr, word string) bool {
	for _, a := range args {
		if s, ok := a.(*ast.StringExpr); ok && strings.EqualFold(s.Value, word) {
			return true
		}
	}
	return false
}

// literalNumber reads a numeric literal argument: 5, -1 or '-1'.
func literalNumber(e ast.Expr) (float64, bool) {
	switch e := e.(type) {
	case *ast.NumberExpr:
		n, err := strconv.ParseFloat(e.Value, 64)
		return n, err == nil
	case *ast.StringExpr:
		n, err := strconv.ParseFloat(e.Value, 64)
		return n, err == nil
	case *ast.UnaryMinusOpExpr:
		n, ok := literalNumber(e.Expr)
		return -n, ok
	}
	return 0, false
}

// nondeterministicMessage explains why time or randomness belongs in ARGV.
func nondeterministicMessage(what, pass string) string {
	if pass == "time" {
		return what + " reads the server clock inside the script; pass the time in ARGV instead (e.g. now_ms): effects replication (Redis >= 5, the default) makes it safe to replicate, but several clients cannot reason about one clock, and tests cannot inject it"
	}
	return what + " draws randomness inside the script; pass randomness in ARGV instead (e.g. a value the client chose): effects replication (Redis >= 5, the default) makes it safe to replicate, but clients cannot reason about the choice, and tests cannot inject it"
}
