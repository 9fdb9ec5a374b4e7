package contract

import (
	"fmt"
	"math"
	"strconv"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// FlagAdmitAt is the flag of a limiter that answers when the caller may go.
const FlagAdmitAt = "--script-admit-at"

// AdmitAt is a compiled --script-admit-at expression: the time, in the run's epoch
// milliseconds, at which the reply lets the caller go.
type AdmitAt struct{ expression }

// admitSamples are replies in the shapes schedulers answer (a time, as a number or a string,
// alone or in an array), for telling before any load whether an expression reads a number.
var admitSamples = func() []any {
	const ms = int64(1_700_000_000_000)
	text := strconv.FormatInt(ms, 10)
	return []any{ms, text, []any{int64(1), ms}, []any{int64(1), text}, []any{ms, int64(0)}, []any{text, int64(0)},
		[]any{int64(1), int64(0), ms}, []any{int64(1), int64(0), text}}
}()

// CompileAdmitAt compiles a Lua expression over reply that gives a time in milliseconds. Besides
// syntax and unknown placeholders, it is tried on sample replies: one that gives no number on
// any of them but something else on some (true, a string, a table) cannot read a time.
func CompileAdmitAt(flag, expr string) (*AdmitAt, error) {
	a := &AdmitAt{}
	if err := a.compile(flag, expr, "tonumber(reply[2])", true); err != nil {
		return nil, err
	}
	v := &values{call: &Call{Now: time.UnixMilli(1_700_000_000_000)}, windowMs: 1000}
	statics := staticArgs(Static{Limit: 10, Burst: 10, Cost: 1, RatePerS: 10, Window: time.Second, StaleAfter: time.Second})
	var other lua.LValue
	for _, reply := range admitSamples {
		ret, err := a.value(reply, statics, v)
		if err != nil {
			continue
		}
		if _, ok := ret.(lua.LNumber); ok {
			return a, nil
		}
		if other == nil {
			other = ret
		}
	}
	if other != nil {
		hint := ""
		if s, ok := other.(lua.LString); ok {
			if _, err := strconv.ParseFloat(string(s), 64); err == nil {
				hint = " (read a numeric string with tonumber(...))"
			}
		}
		return nil, &Error{Flag: flag, Column: 1, Msg: fmt.Sprintf("gives a %s, not a time in milliseconds%s; e.g. 'reply' or 'tonumber(reply[2])'", other.Type(), hint)}
	}
	return a, nil
}

// eval is the time reply lets the call go at, to the microsecond. Anything but a finite number
// is an error: a reply that cannot be read as a time is no decision.
func (a *AdmitAt) eval(reply any, statics []lua.LValue, v *values) (time.Time, error) {
	ret, err := a.value(reply, statics, v)
	if err != nil {
		return time.Time{}, err
	}
	n, ok := ret.(lua.LNumber)
	if !ok {
		fix := ""
		if _, isString := ret.(lua.LString); isString {
			fix = "; read a numeric string with tonumber(...)"
		}
		return time.Time{}, fmt.Errorf("%s %q gave a %s, not a time in milliseconds (reply is %s)%s", a.flag, a.expr, ret.Type(), shape(reply), fix)
	}
	ms := float64(n)
	if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > 1e15 {
		return time.Time{}, fmt.Errorf("%s %q gave %v, not a time in milliseconds (reply is %s)", a.flag, a.expr, ms, shape(reply))
	}
	return time.UnixMicro(int64(math.Floor(ms * 1000))), nil
}
