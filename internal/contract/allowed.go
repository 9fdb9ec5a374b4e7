package contract

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// DefaultAllowed is the decision of the shipped scripts: the first element of the reply is 1.
const DefaultAllowed = "reply[1] == 1"

// The expression is compiled as the body of a function whose arguments are the reply, the
// run's fixed values and the call's time; it starts on the third line, so a position Lua
// reports maps back to the flag's value.
const (
	allowedPrefix   = "local reply, limit, burst, rate_per_s, cost, window_ms, window_s, stale_after_ms, stale_after_s, now_ms, now_s, now_us, now_ns, now_s_int, window_index, prev_window_index, window_start_ms = ...\nreturn (\n"
	allowedFirstRow = 3
)

// allowedStatics are the run's fixed values an expression may use, in the order allowedPrefix
// takes them, so 'reply[1] <= {limit}' follows --limit.
var allowedStatics = []placeholder{phLimit, phBurst, phRatePerS, phCost, phWindowMs, phWindowS, phStaleAfterMs, phStaleAfterS}

// callTimes are the call's own values an expression may use, after allowedStatics: the time
// the call was sent with, so 'reply <= {now_ms}' reads a schedule's answer against it.
var callTimes = []placeholder{phNowMs, phNowS, phNowUs, phNowNs, phNowSInt, phWindowIndex, phPrevWindowIndex, phWindowStartMs}

// placeholderLocals turns each {name} of a fixed value or of the call's time into the local of
// that name, padded to the same width (" limit " for "{limit}"), so the columns Lua reports
// still match the flag's value; perCall says the call's time is read. A text placeholder
// ({key}, {member}, {reply}) has no number to give. Other braces are Lua's (a table
// constructor) and stay, unless strict: an expression that must give a number has no use for
// a table of one name, so {name} there is a misspelt placeholder.
func placeholderLocals(flag, expr string, strict bool) (body string, perCall bool, err error) {
	runes := []rune(expr)
	for i := 0; i < len(runes); i++ {
		if runes[i] != '{' {
			continue
		}
		end := i + 1
		for end < len(runes) && (runes[end] == '_' || (runes[end] >= 'a' && runes[end] <= 'z')) {
			end++
		}
		if end == len(runes) || runes[end] != '}' || end == i+1 {
			continue
		}
		name := string(runes[i+1 : end])
		ph, ok := placeholderNames[name]
		switch {
		case !ok && strict:
			return "", false, &Error{Flag: flag, Column: i + 1, Msg: fmt.Sprintf("unknown placeholder {%s}; the expression may use %s", name, exprPlaceholders())}
		case !ok:
			continue
		case slices.Contains(callTimes, ph):
			perCall = true
		case !ph.static():
			return "", false, &Error{Flag: flag, Column: i + 1, Msg: fmt.Sprintf("{%s} is text that changes from call to call, so a reply cannot be judged by it; the expression may use %s",
				name, exprPlaceholders())}
		}
		runes[i], runes[end] = ' ', ' '
		i = end
	}
	return string(runes), perCall, nil
}

// exprPlaceholders names the placeholders an expression may use.
func exprPlaceholders() string {
	var names []string
	for _, p := range append(slices.Clone(allowedStatics), callTimes...) {
		names = append(names, "{"+p.name()+"}")
	}
	return "the run's fixed values and the call's time: " + strings.Join(names, " ")
}

// expression is a compiled Lua expression over reply. It is safe for concurrent use: each
// goroutine borrows its own Lua state from a pool, so a call costs no compilation.
type expression struct {
	flag, expr string
	proto      *lua.FunctionProto
	pool       sync.Pool
	// perCall: the expression reads the call's time, so its value differs from call to call.
	perCall bool
}

type allowedState struct {
	L  *lua.LState
	fn *lua.LFunction
	// header is a response expression's header table, made on its first use; lookup answers
	// its reads during one evaluation (response.go).
	header *lua.LTable
	lookup func(name string) (string, bool)
}

// compile compiles expr into e. A syntax error names the flag and the column.
func (e *expression) compile(flag, expr, example string, strict bool) error {
	if strings.TrimSpace(expr) == "" {
		return &Error{Flag: flag, Msg: "empty expression; want a Lua expression over reply, e.g. " + example}
	}
	body, perCall, err := placeholderLocals(flag, expr, strict)
	if err != nil {
		return err
	}
	e.perCall = perCall
	return e.compileBody(flag, expr, allowedPrefix, body)
}

// compileBody compiles body (expr with its placeholders made locals) as the return value of a
// function whose arguments prefix names. prefix is two lines, as allowedPrefix, so a position
// Lua reports maps back to the flag's value.
func (e *expression) compileBody(flag, expr, prefix, body string) error {
	e.flag, e.expr = flag, expr
	src := prefix + body + "\n)"
	chunk, err := parse.Parse(strings.NewReader(src), flag)
	if err != nil {
		return allowedSyntaxError(flag, expr, err)
	}
	proto, err := lua.Compile(chunk, flag)
	if err != nil {
		return &Error{Flag: flag, Msg: "cannot compile: " + strings.TrimSpace(err.Error())}
	}
	e.proto = proto
	e.pool.New = func() any { return e.newState() }
	return nil
}

// Allowed is a compiled --script-allowed expression: true when the reply admits.
type Allowed struct{ expression }

// CompileAllowed compiles a Lua expression over reply. A syntax error names the flag and the
// column.
func CompileAllowed(flag, expr string) (*Allowed, error) {
	a := &Allowed{}
	if err := a.compile(flag, expr, DefaultAllowed, false); err != nil {
		return nil, err
	}
	return a, nil
}

// allowedSyntaxError turns gopher-lua's position (in the wrapped source) into one in expr.
func allowedSyntaxError(flag, expr string, err error) error {
	var pe *parse.Error
	if !errors.As(err, &pe) {
		return &Error{Flag: flag, Msg: "syntax error: " + strings.TrimSpace(err.Error())}
	}
	msg := strings.TrimSpace(pe.Message)
	row := pe.Pos.Line - allowedFirstRow
	lines := strings.Split(expr, "\n")
	if pe.Pos.Line == parse.EOF || row < 0 || row >= len(lines) {
		return &Error{Flag: flag, Msg: fmt.Sprintf("syntax error at the end of the expression: %s", msg)}
	}
	col := pe.Pos.Column
	for _, l := range lines[:row] {
		col += len([]rune(l)) + 1
	}
	if pe.Token != "" {
		msg += fmt.Sprintf(" (near %q)", pe.Token)
	}
	return &Error{Flag: flag, Column: col, Msg: "syntax error: " + msg}
}

// String is the expression as given.
func (e *expression) String() string { return e.expr }

// PerCall reports whether the expression reads the call's time ({now_ms} and the like).
func (e *expression) PerCall() bool { return e.perCall }

func (e *expression) newState() *allowedState {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 64, RegistrySize: 256})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	return &allowedState{L: L, fn: L.NewFunctionFromProto(e.proto)}
}

// Eval reports whether reply, converted as Redis converts replies for Lua, makes the
// expression true, with no run's values bound (a {limit} in it is nil).
func (a *Allowed) Eval(reply any) (bool, error) { return a.eval(reply, nil, nil) }

// staticArgs are the run's fixed values as the expression's locals, in allowedStatics order.
func staticArgs(s Static) []lua.LValue {
	args := make([]lua.LValue, len(allowedStatics))
	for i, p := range allowedStatics {
		v, _ := strconv.ParseFloat(staticValue(p, s), 64)
		args[i] = lua.LNumber(v)
	}
	return args
}

// value evaluates the expression on reply with the run's fixed values (statics, none when nil)
// and the call's time (v, none when nil: {now_ms} is then nil).
func (e *expression) value(reply any, statics []lua.LValue, v *values) (lua.LValue, error) {
	st := e.pool.Get().(*allowedState)
	defer e.pool.Put(st)
	L := st.L
	L.Push(st.fn)
	L.Push(toLua(L, reply))
	n := 1
	if v != nil && e.perCall {
		for i := range allowedStatics {
			if i < len(statics) {
				L.Push(statics[i])
			} else {
				L.Push(lua.LNil)
			}
		}
		for _, p := range callTimes {
			L.Push(lua.LNumber(v.num(p).float()))
		}
		n += len(allowedStatics) + len(callTimes)
	} else {
		for _, s := range statics {
			L.Push(s)
		}
		n += len(statics)
	}
	if err := L.PCall(n, 1, nil); err != nil {
		L.SetTop(0)
		msg := luaMessage(err)
		if fix := tonumberFix(msg, reply); fix != "" {
			// The fix first: error samples keep only a message's first 200 bytes.
			return nil, fmt.Errorf("%s %q compares a string with a number: read it with %s, e.g. '%s > 0'; the reply is %s: %s",
				e.flag, e.expr, fix, fix, shape(reply), msg)
		}
		return nil, fmt.Errorf("%s %q failed on a reply that is %s: %s", e.flag, e.expr, shape(reply), msg)
	}
	ret := L.Get(-1)
	L.SetTop(0)
	return ret, nil
}

// eval judges reply with the run's fixed values and the call's. The expression must give a
// boolean: a number such as 0 is true in Lua, and reading it as admitted would be a wrong verdict.
func (a *Allowed) eval(reply any, statics []lua.LValue, v *values) (bool, error) {
	ret, err := a.value(reply, statics, v)
	if err != nil {
		return false, err
	}
	if b, ok := ret.(lua.LBool); ok {
		return bool(b), nil
	}
	return false, fmt.Errorf("%s %q gave a %s, not true or false (reply is %s)", a.flag, a.expr, ret.Type(), shape(reply))
}

var luaPosition = regexp.MustCompile(`^--[a-z-]+:\d+: `)

// luaMessage is the runtime error without the chunk's position and stack trace.
func luaMessage(err error) string {
	msg := err.Error()
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		msg = ae.Object.String()
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return luaPosition.ReplaceAllString(msg, "")
}

// toLua converts a go-redis reply the way Redis converts a reply for Lua: integer to number,
// bulk or status to string, array to table, nil to false, an error to {err=...}. (A status
// reply reaches go-redis as a plain string, so it reads as a string here, not {ok=...}.)
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LFalse
	case int64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			t.RawSetInt(i+1, toLua(L, e))
		}
		return t
	case bool: // RESP3 boolean
		return lua.LBool(x)
	case float64: // RESP3 double
		return lua.LNumber(x)
	case map[any]any: // RESP3 map
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSet(toLua(L, k), toLua(L, e))
		}
		return t
	case error:
		t := L.CreateTable(0, 1)
		t.RawSetString("err", lua.LString(x.Error()))
		return t
	default:
		return lua.LString(fmt.Sprint(x))
	}
}

// tonumberFix names the fix for a comparison that met a string, or "": scripts reply numbers as
// strings (redis_rate's retry_after, any float), and Lua does not compare a string with a number.
func tonumberFix(msg string, reply any) string {
	if !strings.Contains(msg, "attempt to compare") || !strings.Contains(msg, "string") {
		return ""
	}
	if arr, ok := reply.([]any); ok {
		for i, e := range arr {
			if _, isString := e.(string); isString {
				return fmt.Sprintf("tonumber(reply[%d])", i+1)
			}
		}
	}
	return "tonumber(reply)"
}

// shape describes a reply by type, not value, so error samples group by kind of mistake.
func shape(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil (false in Lua)"
	case int64:
		return "an integer"
	case string:
		if _, err := strconv.ParseFloat(x, 64); err == nil {
			return "a numeric string"
		}
		return "a string"
	case []any:
		parts := make([]string, 0, min(len(x), 6))
		for i, e := range x {
			if i == 6 {
				parts = append(parts, "...")
				break
			}
			parts = append(parts, elementShape(e))
		}
		return "an array {" + strings.Join(parts, ", ") + "}"
	case bool:
		return "a boolean"
	case error:
		return "an error"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

func elementShape(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case int64:
		return "integer"
	case string:
		return "string"
	case []any:
		return "array"
	case error:
		return "error"
	default:
		return fmt.Sprintf("%T", v)
	}
}
