package lint

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/gopher-lua/ast"
)

// origin is where a value came from, as far as the linter's simple data flow
// can tell: enough to say whether a key is declared and whether a number was
// converted.
type origin int

const (
	fromUnknown origin = iota // anything the linter does not follow: parameters, most calls
	fromKeys                  // KEYS[i], directly or through locals
	fromArgv                  // ARGV[i] as received: always a string
	fromNumber                // a number literal, tonumber(...), arithmetic
	fromConcat                // built with ..
	fromString                // a string literal
	fromLoop                  // a loop variable over something other than KEYS or ARGV
	fromReply                 // the reply of redis.call/pcall, an element of it, or a loop variable over it
	fromParam                 // a parameter of a function the script defines; param and fn say which
	localFunc                 // a function the script defines; fn describes it
	keysTable                 // the KEYS table itself (so `local keys = KEYS` works)
	argvTable                 // the ARGV table itself
	keyList                   // a table constructor holding only declared keys
	builtin                   // a Redis-provided global or one of its fields; name says which
)

// value is what the linter knows about an expression's result.
type value struct {
	origin origin
	// name is the value's resolved text, with locals replaced by what they
	// were assigned: KEYS[1], ARGV[2], KEYS[1] .. ':x'. Two key expressions
	// with the same origin and name are the same key.
	name string
	// grows is set on replies whose size grows with the data (ZRANGE ... 0 -1,
	// SMEMBERS, ZCARD...): it says which call, for the unbounded-loop message.
	grows string
	// typ is the Lua type the value certainly has, and typWhy says why, for
	// reply-type: "ARGV, always a string", "the integer reply of INCRBY".
	typ    luaType
	typWhy string
	// reply names the command whose reply this value was computed from, if
	// any; it survives arithmetic, tonumber and merges, so a loop condition
	// can tell it depends on the data.
	reply string
	// fn is the function a localFunc value is, or whose parameter number
	// param a fromParam value is.
	fn    *funcInfo
	param int
	// members are the resolved names of the declared keys a keyList holds,
	// and which one an element of it or a loop variable over it may be:
	// `for _, k in ipairs({KEYS[2], KEYS[3]})` gives a TTL to those two only.
	members []string
}

// luaType is a Lua type the linter is certain of.
type luaType int

const (
	anyType luaType = iota
	numberType
	stringType
)

// merge is what a local holds after a branch or loop body may have assigned
// it. Origin and type, which errors rest on, are kept only when both values
// share them. What the value depends on (grows, reply), which only warnings
// rest on, is the assigned value's: `if n > 100 then n = 100 end` caps a
// count, and `cursor = reply[1]` in a loop body is what its condition reads.
func merge(before, after value) value {
	out := value{name: after.name, grows: after.grows, reply: after.reply}
	if before.typ == after.typ {
		out.typ, out.typWhy = after.typ, after.typWhy
	}
	if before.origin == after.origin && before.fn == after.fn && before.param == after.param {
		out.origin, out.fn, out.param = after.origin, after.fn, after.param
		if before.name != after.name && after.origin == fromKeys {
			out.name = "KEYS[?]" // one of two declared keys: a key the linter cannot name
		}
	}
	return out
}

// maxName bounds value names and rendered expressions: they only feed
// messages and key identity, and a long concatenation chain must not make
// names grow quadratically.
const maxName = 80

// clip shortens s to about maxName bytes, marking the cut, without
// splitting a UTF-8 sequence.
func clip(s string) string {
	if len(s) <= maxName {
		return s
	}
	cut := maxName
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// luaQuote renders a string literal as the script would read it; escapes
// keep control characters and invalid UTF-8 out of messages.
func luaQuote(s string) string {
	if strings.ContainsAny(s, "'\\") || !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return "'" + s + "'"
}

// maxRenderDepth bounds how deep render descends. Without it, rendering each
// level of a left-deep chain (a + b + c ..., f()()()) would walk down to its
// first leaf every time: quadratic in the chain's length.
const maxRenderDepth = 12

// render prints an expression back as short Lua-like source for messages.
func render(e ast.Expr) string {
	var b strings.Builder
	renderTo(&b, e, 0)
	return clip(b.String())
}

func renderTo(b *strings.Builder, e ast.Expr, depth int) {
	if b.Len() > maxName {
		return // clip will cut here anyway
	}
	if depth > maxRenderDepth {
		b.WriteString("...")
		return
	}
	depth++
	switch e := e.(type) {
	case *ast.IdentExpr:
		b.WriteString(e.Value)
	case *ast.StringExpr:
		b.WriteString(luaQuote(e.Value))
	case *ast.NumberExpr:
		b.WriteString(e.Value)
	case *ast.NilExpr:
		b.WriteString("nil")
	case *ast.TrueExpr:
		b.WriteString("true")
	case *ast.FalseExpr:
		b.WriteString("false")
	case *ast.Comma3Expr:
		b.WriteString("...")
	case *ast.AttrGetExpr:
		renderTo(b, e.Object, depth)
		if key, ok := e.Key.(*ast.StringExpr); ok && isName(key.Value) {
			b.WriteString("." + key.Value)
			return
		}
		b.WriteString("[")
		renderTo(b, e.Key, depth)
		b.WriteString("]")
	case *ast.FuncCallExpr:
		if e.Func != nil {
			renderTo(b, e.Func, depth)
		} else {
			renderTo(b, e.Receiver, depth)
			b.WriteString(":" + e.Method)
		}
		b.WriteString("(")
		for i, arg := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			renderTo(b, arg, depth)
		}
		b.WriteString(")")
	case *ast.StringConcatOpExpr:
		renderBinary(b, e.Lhs, "..", e.Rhs, depth)
	case *ast.ArithmeticOpExpr:
		renderBinary(b, e.Lhs, e.Operator, e.Rhs, depth)
	case *ast.RelationalOpExpr:
		renderBinary(b, e.Lhs, e.Operator, e.Rhs, depth)
	case *ast.LogicalOpExpr:
		renderBinary(b, e.Lhs, e.Operator, e.Rhs, depth)
	case *ast.UnaryMinusOpExpr:
		b.WriteString("-")
		renderTo(b, e.Expr, depth)
	case *ast.UnaryNotOpExpr:
		b.WriteString("not ")
		renderTo(b, e.Expr, depth)
	case *ast.UnaryLenOpExpr:
		b.WriteString("#")
		renderTo(b, e.Expr, depth)
	case *ast.TableExpr:
		b.WriteString("{...}")
	case *ast.FunctionExpr:
		b.WriteString("function(...) end")
	default:
		b.WriteString("?")
	}
}

func renderBinary(b *strings.Builder, lhs ast.Expr, op string, rhs ast.Expr, depth int) {
	renderTo(b, lhs, depth)
	b.WriteString(" " + op + " ")
	renderTo(b, rhs, depth)
}

// isName reports whether s can follow a dot (t.name) in Lua.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// describe names an expression for a message: its source, plus the origin it
// resolves to when that differs (`key (KEYS[1])`).
func describe(e ast.Expr, v value) string {
	src := render(e)
	if v.name == "" || v.name == src {
		return src
	}
	return src + " (" + v.name + ")"
}
