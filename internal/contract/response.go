package contract

import (
	"fmt"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// An HTTP target's decision (--http-admitted, --http-refused) is read from its response as a
// script's is read from its reply (--script-allowed): a Lua expression, compiled once, run on
// pooled states, that must give true or false. It reads the response's status code (status)
// and its headers (header['Retry-After']: by name, in any case, nil when absent; a string).
const (
	DefaultHTTPAdmitted = "status >= 200 and status < 300"
	DefaultHTTPRefused  = "status == 429"

	// responsePrefix is two lines, as allowedPrefix, so a position Lua reports maps back.
	responsePrefix = "local status, header = ...\nreturn (\n"
)

// readsHeader finds the word header (the table) in an expression.
var readsHeader = regexp.MustCompile(`\bheader\b`)

// Response is a compiled --http-admitted or --http-refused expression. It is safe for
// concurrent use.
type Response struct {
	expression
	// byStatus: the expression names neither the headers nor anything that may change from
	// call to call (the varargs, math.random), so its value is the status code's alone.
	byStatus bool
}

// CompileResponse compiles a Lua expression over status and header. A syntax error names the
// flag and the column. Braces are Lua's (a table constructor): an HTTP expression has no
// placeholders.
func CompileResponse(flag, expr string) (*Response, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, &Error{Flag: flag, Msg: "empty expression; want a Lua expression over status and header, e.g. " + DefaultHTTPRefused}
	}
	r := &Response{byStatus: !readsHeader.MatchString(expr) && !strings.Contains(expr, "...") && !strings.Contains(expr, "random")}
	if err := r.compileBody(flag, expr, responsePrefix, expr); err != nil {
		return nil, err
	}
	return r, nil
}

// ByStatus reports whether the expression's value depends on the status code alone, so a
// caller may evaluate it once per code.
func (r *Response) ByStatus() bool { return r.byStatus }

// Eval reports whether a response with status and the headers lookup reads (by name as
// written in the expression; nil reads none) makes the expression true. It must give a
// boolean: a number such as 0 is true in Lua, and reading it as a decision would be a wrong
// verdict.
func (r *Response) Eval(status int, lookup func(name string) (string, bool)) (bool, error) {
	st := r.pool.Get().(*allowedState)
	defer r.pool.Put(st)
	L := st.L
	if st.header == nil {
		st.header = headerTable(st)
	}
	st.lookup = lookup
	defer func() { st.lookup = nil }()
	L.Push(st.fn)
	L.Push(lua.LNumber(status))
	L.Push(st.header)
	if err := L.PCall(2, 1, nil); err != nil {
		L.SetTop(0)
		return false, fmt.Errorf("%s %q failed on a response of status %d: %s", r.flag, r.expr, status, luaMessage(err))
	}
	ret := L.Get(-1)
	L.SetTop(0)
	if b, ok := ret.(lua.LBool); ok {
		return bool(b), nil
	}
	return false, fmt.Errorf("%s %q gave a %s, not true or false (status %d)", r.flag, r.expr, ret.Type(), status)
}

// headerTable is a state's header table: reads go to the evaluation's lookup, writes are
// refused (a pooled state must carry nothing from one response to the next).
func headerTable(st *allowedState) *lua.LTable {
	L := st.L
	t, meta := L.NewTable(), L.NewTable()
	meta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		name, ok := L.Get(2).(lua.LString)
		if ok && st.lookup != nil {
			if v, found := st.lookup(string(name)); found {
				L.Push(lua.LString(v))
				return 1
			}
		}
		L.Push(lua.LNil)
		return 1
	}))
	meta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("header is read-only")
		return 0
	}))
	L.SetMetatable(t, meta)
	return t
}
