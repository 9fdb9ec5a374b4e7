package contract

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Arithmetic inside one placeholder: {now_ms + window_ms}, {limit - 1}, {rate_per_s / 1000}.
// It is parsed once, before any load, into a small tree whose static leaves Bind folds into
// constants, so a call evaluates only what depends on its own time.

// number is a value of arithmetic: an integer while every step stays whole and in range (the
// nanosecond clock needs all 63 bits: a float64 would round it), else a float.
type number struct {
	i       int64
	f       float64
	isFloat bool
}

func intNum(i int64) number     { return number{i: i} }
func floatNum(f float64) number { return number{f: f, isFloat: true} }

func (n number) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

// String is the number as a script receives it: an integer's digits, a float's shortest
// decimal that reads back to the same value, never an exponent (every Lua tonumber reads it).
func (n number) String() string {
	if !n.isFloat {
		return strconv.FormatInt(n.i, 10)
	}
	return strconv.FormatFloat(n.f, 'f', -1, 64)
}

type opKind byte

const (
	opConst opKind = iota
	opPlaceholder
	opAdd
	opSub
	opMul
	opDiv
	opNeg
)

// expr is one node of a parsed expression.
type expr struct {
	op          opKind
	value       number      // opConst
	ph          placeholder // opPlaceholder
	left, right *expr       // operands (opNeg: left only)
}

// numericPlaceholder reports whether p stands for a number, so it may take part in arithmetic.
func numericPlaceholder(p placeholder) bool {
	switch p {
	case phKey, phMember, phReply:
		return false
	}
	return p != literal && p != phExpr
}

// walk calls fn on every placeholder leaf.
func (e *expr) walk(fn func(placeholder)) {
	if e == nil {
		return
	}
	if e.op == opPlaceholder {
		fn(e.ph)
	}
	e.left.walk(fn)
	e.right.walk(fn)
}

// parseExpr parses the text between a placeholder's braces, which starts at column start
// (0-based, in runes of the flag's value), so every error names the column of its cause.
func parseExpr(flag string, text []rune, start int) (*expr, error) {
	p := exprParser{flag: flag, text: text, start: start}
	e, err := p.sum()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(p.text) {
		return nil, p.errAt(p.pos, "unexpected %q in an expression; want + - * / between numbers and placeholders", string(p.text[p.pos]))
	}
	return e, nil
}

type exprParser struct {
	flag  string
	text  []rune
	start int
	pos   int
}

func (p *exprParser) errAt(pos int, format string, a ...any) error {
	return &Error{Flag: p.flag, Column: p.start + pos + 1, Msg: fmt.Sprintf(format, a...)}
}

func (p *exprParser) space() {
	for p.pos < len(p.text) && isSpace(p.text[p.pos]) {
		p.pos++
	}
}

// peek returns the next operator character, or 0.
func (p *exprParser) peek() rune {
	p.space()
	if p.pos < len(p.text) {
		return p.text[p.pos]
	}
	return 0
}

func (p *exprParser) sum() (*expr, error) {
	left, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		switch p.peek() {
		case '+', '-':
			op := map[rune]opKind{'+': opAdd, '-': opSub}[p.text[p.pos]]
			p.pos++
			right, err := p.product()
			if err != nil {
				return nil, err
			}
			left = &expr{op: op, left: left, right: right}
		default:
			return left, nil
		}
	}
}

func (p *exprParser) product() (*expr, error) {
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		switch p.peek() {
		case '*', '/':
			op := map[rune]opKind{'*': opMul, '/': opDiv}[p.text[p.pos]]
			at := p.pos
			p.pos++
			right, err := p.unary()
			if err != nil {
				return nil, err
			}
			if op == opDiv && right.op == opConst && right.value.float() == 0 {
				return nil, p.errAt(at, "division by zero")
			}
			left = &expr{op: op, left: left, right: right}
		default:
			return left, nil
		}
	}
}

func (p *exprParser) unary() (*expr, error) {
	if p.peek() == '-' {
		p.pos++
		operand, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &expr{op: opNeg, left: operand}, nil
	}
	return p.primary()
}

func (p *exprParser) primary() (*expr, error) {
	r := p.peek()
	at := p.pos
	switch {
	case r == 0:
		return nil, p.errAt(at, "the expression ends where a number or placeholder is due")
	case r == '(':
		p.pos++
		e, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ')' {
			return nil, p.errAt(at, "unbalanced parenthesis")
		}
		p.pos++
		return e, nil
	case r >= '0' && r <= '9' || r == '.':
		for p.pos < len(p.text) && (p.text[p.pos] >= '0' && p.text[p.pos] <= '9' || p.text[p.pos] == '.') {
			p.pos++
		}
		lit := string(p.text[at:p.pos])
		if !strings.Contains(lit, ".") {
			if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
				return &expr{op: opConst, value: intNum(i)}, nil
			}
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return nil, p.errAt(at, "%q is not a number", lit)
		}
		return &expr{op: opConst, value: floatNum(f)}, nil
	case r == '_' || r >= 'a' && r <= 'z':
		for p.pos < len(p.text) && (p.text[p.pos] == '_' || p.text[p.pos] >= 'a' && p.text[p.pos] <= 'z') {
			p.pos++
		}
		name := string(p.text[at:p.pos])
		ph, ok := placeholderNames[name]
		if !ok {
			var numeric []string
			for _, n := range Placeholders() {
				if numericPlaceholder(placeholderNames[n]) {
					numeric = append(numeric, n)
				}
			}
			return nil, p.errAt(at, "unknown placeholder %s in an expression; numeric ones: %s", name, strings.Join(numeric, " "))
		}
		if !numericPlaceholder(ph) {
			return nil, p.errAt(at, "%s is not a number, so it takes no arithmetic", name)
		}
		return &expr{op: opPlaceholder, ph: ph}, nil
	}
	return nil, p.errAt(at, "unexpected %q in an expression; want a number, a placeholder or (", string(r))
}

// apply combines two numbers. Integers stay exact while the result is whole and in range; a
// division that does not come out whole, or an overflow, continues as a float.
func apply(op opKind, a, b number) number {
	if !a.isFloat && !b.isFloat {
		switch op {
		case opAdd:
			if s := a.i + b.i; (s > a.i) == (b.i > 0) || b.i == 0 {
				return intNum(s)
			}
		case opSub:
			if d := a.i - b.i; (d < a.i) == (b.i > 0) || b.i == 0 {
				return intNum(d)
			}
		case opMul:
			if a.i == 0 || b.i == 0 {
				return intNum(0)
			}
			if m := a.i * b.i; m/b.i == a.i && !(a.i == -1 && b.i == math.MinInt64) && !(b.i == -1 && a.i == math.MinInt64) {
				return intNum(m)
			}
		case opDiv:
			if b.i != 0 && a.i%b.i == 0 {
				return intNum(a.i / b.i)
			}
		}
	}
	x, y := a.float(), b.float()
	switch op {
	case opAdd:
		return floatNum(x + y)
	case opSub:
		return floatNum(x - y)
	case opMul:
		return floatNum(x * y)
	default:
		return floatNum(x / y)
	}
}

// eval computes the expression; leaf gives each placeholder's value.
func (e *expr) eval(leaf func(placeholder) number) number {
	switch e.op {
	case opConst:
		return e.value
	case opPlaceholder:
		return leaf(e.ph)
	case opNeg:
		v := e.left.eval(leaf)
		if !v.isFloat && v.i != math.MinInt64 {
			return intNum(-v.i)
		}
		return floatNum(-v.float())
	}
	return apply(e.op, e.left.eval(leaf), e.right.eval(leaf))
}

// fold replaces every subtree that known can evaluate (the run's fixed values, the slot) by
// its constant. A division by a constant zero is an error.
func (e *expr) fold(known func(placeholder) (number, bool)) (*expr, error) {
	switch e.op {
	case opConst:
		return e, nil
	case opPlaceholder:
		if v, ok := known(e.ph); ok {
			return &expr{op: opConst, value: v}, nil
		}
		return e, nil
	}
	left, err := e.left.fold(known)
	if err != nil {
		return nil, err
	}
	out := &expr{op: e.op, left: left}
	if e.op != opNeg {
		if out.right, err = e.right.fold(known); err != nil {
			return nil, err
		}
	}
	if out.op == opDiv && out.right.op == opConst && out.right.value.float() == 0 {
		return nil, fmt.Errorf("division by zero")
	}
	if left.op == opConst && (out.right == nil || out.right.op == opConst) {
		return &expr{op: opConst, value: out.eval(nil)}, nil
	}
	return out, nil
}
