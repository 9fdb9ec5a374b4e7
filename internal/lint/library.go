package lint

import (
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// callback is a function a Function library registers.
type callback struct {
	name     string
	noWrites bool // flags={'no-writes'}: Redis refuses its write commands
}

// registrations finds the functions a library registers at its top level,
// before the walk (a registration nested in a block or loop is counted by the
// walk, but its callback's parameters are not followed), so each callback's body is walked as a unit of its own
// with its first two parameters as KEYS and ARGV. Both forms count:
// redis.register_function('name', fn) and
// redis.register_function{function_name='name', callback=fn, flags={...}},
// where fn is a function expression, a local function defined above, or a
// field of a local table defined above (function M.take(keys, args), M.take =
// function..., local M = {take = function...}), the module style.
func registrations(chunk []ast.Stmt) map[*ast.FunctionExpr]callback {
	found := map[*ast.FunctionExpr]callback{}
	defined := map[string]*ast.FunctionExpr{}
	resolve := func(e ast.Expr) *ast.FunctionExpr {
		switch e := e.(type) {
		case *ast.FunctionExpr:
			return e
		case *ast.IdentExpr:
			return defined[e.Value]
		case *ast.AttrGetExpr:
			if name, ok := fieldName(e); ok {
				return defined[name]
			}
		}
		return nil
	}
	for _, s := range chunk {
		switch s := s.(type) {
		case *ast.LocalAssignStmt:
			for i, name := range s.Names {
				for k := range defined {
					if k == name || strings.HasPrefix(k, name+".") {
						delete(defined, k)
					}
				}
				if i >= len(s.Exprs) {
					continue
				}
				switch e := s.Exprs[i].(type) {
				case *ast.FunctionExpr:
					defined[name] = e
				case *ast.TableExpr:
					for _, f := range e.Fields {
						key, ok := f.Key.(*ast.StringExpr)
						if fn, isFn := f.Value.(*ast.FunctionExpr); ok && isFn {
							defined[name+"."+key.Value] = fn
						}
					}
				}
			}
		case *ast.FuncDefStmt:
			if target, ok := s.Name.Func.(*ast.AttrGetExpr); ok {
				if name, ok := fieldName(target); ok {
					defined[name] = s.Func
				}
			}
		case *ast.AssignStmt:
			for i, lhs := range s.Lhs {
				target, ok := lhs.(*ast.AttrGetExpr)
				if !ok || i >= len(s.Rhs) {
					continue
				}
				if name, ok := fieldName(target); ok {
					delete(defined, name)
					if fn, ok := s.Rhs[i].(*ast.FunctionExpr); ok {
						defined[name] = fn
					}
				}
			}
		case *ast.FuncCallStmt:
			call, ok := s.Expr.(*ast.FuncCallExpr)
			if !ok || !isRegisterFunction(call.Func) {
				continue
			}
			var cb callback
			var fn *ast.FunctionExpr
			switch {
			case len(call.Args) >= 2:
				if name, ok := call.Args[0].(*ast.StringExpr); ok {
					cb.name = name.Value
				}
				fn = resolve(call.Args[1])
			case len(call.Args) == 1:
				table, ok := call.Args[0].(*ast.TableExpr)
				if !ok {
					continue
				}
				for _, f := range table.Fields {
					key, ok := f.Key.(*ast.StringExpr)
					if !ok {
						continue
					}
					switch key.Value {
					case "function_name":
						if name, ok := f.Value.(*ast.StringExpr); ok {
							cb.name = name.Value
						}
					case "callback":
						fn = resolve(f.Value)
					case "flags":
						if flags, ok := f.Value.(*ast.TableExpr); ok {
							for _, flag := range flags.Fields {
								if s, ok := flag.Value.(*ast.StringExpr); ok && flag.Key == nil && strings.EqualFold(s.Value, "no-writes") {
									cb.noWrites = true
								}
							}
						}
					}
				}
			}
			if fn != nil {
				found[fn] = cb
			}
		}
	}
	return found
}

// fieldName names t.f (or t['f']) for a table held in a name, as "t.f".
func fieldName(e *ast.AttrGetExpr) (string, bool) {
	obj, ok := e.Object.(*ast.IdentExpr)
	key, ok2 := e.Key.(*ast.StringExpr)
	if !ok || !ok2 {
		return "", false
	}
	return obj.Value + "." + key.Value, true
}

// isRegisterFunction reports whether fn is redis.register_function (or
// Valkey's server.register_function).
func isRegisterFunction(fn ast.Expr) bool {
	attr, ok := fn.(*ast.AttrGetExpr)
	if !ok {
		return false
	}
	obj, ok := attr.Object.(*ast.IdentExpr)
	key, ok2 := attr.Key.(*ast.StringExpr)
	return ok && ok2 && (obj.Value == "redis" || obj.Value == "server") && key.Value == "register_function"
}
