package lint

import (
	"strconv"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// keyWrite is a key some command writes, kept until the whole script has
// been seen and missing-expire can tell whether it ever gets a TTL.
type keyWrite struct {
	name    string // resolved key, the identity TTLs are matched on
	source  string // the key as written at the call
	display string
	command string
	at      pos
}

// redisCall checks one redis.call or redis.pcall. Only a literal command
// name is checked: with a computed one the linter cannot know the keys.
func (c *checker) redisCall(e *ast.FuncCallExpr, fn string) value {
	c.redisCalls++
	args := c.exprList(e.Args, 0)
	reply := value{origin: fromReply, name: render(e)}
	if len(e.Args) == 0 {
		return reply
	}
	literal, ok := e.Args[0].(*ast.StringExpr)
	if !ok {
		return reply
	}
	cmd := strings.ToUpper(literal.Value)
	at := c.pos.at(e)
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
	at := c.pos.at(arg)
	what := describe(arg, v)
	switch v.origin {
	case fromArgv:
		c.report(at, RuleUndeclaredKey,
			"%s key %s comes from ARGV; Redis Cluster routes a script by its KEYS only, so pass the key name in KEYS and read it from there",
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

func (c *checker) expire(v value) {
	if resolved(v) {
		c.expired[v.name] = true
	} else {
		c.expireUnresolved = true
	}
}

func (c *checker) write(cmd string, key ast.Expr, v value) {
	if !resolved(v) {
		return
	}
	c.writes = append(c.writes, keyWrite{
		name:    v.name,
		source:  render(key),
		display: describe(key, v),
		command: cmd,
		at:      c.pos.at(key),
	})
}

// missingExpire reports, once per key at its first write, every written key
// that no command in the script gives a TTL.
func (c *checker) missingExpire() {
	if c.expireUnresolved {
		return
	}
	reported := map[string]bool{}
	for _, w := range c.writes {
		if c.expired[w.name] || reported[w.name] {
			continue
		}
		reported[w.name] = true
		c.report(w.at, RuleMissingExpire,
			"%s is written by %s but this script never gives it a TTL, so an abandoned key lives forever; add redis.call('PEXPIRE', %s, ttl_ms) after the write (or write it with SET ... PX ttl_ms)",
			w.display, w.command, w.source)
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
