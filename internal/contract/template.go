package contract

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// placeholder is one of the names a template may use between braces.
type placeholder uint8

const (
	literal placeholder = iota // not a placeholder: the part is text
	phKey
	phMember
	phLimit
	phBurst
	phRatePerS
	phCost
	phWindowMs
	phWindowS
	phWindowUs
	phWindowNs
	phStaleAfterMs
	phStaleAfterS
	phNowMs
	phNowS
	phNowUs
	phNowNs
	phNowSInt
	phWindowIndex
	phPrevWindowIndex
	phWindowStartMs
	phReply // --script-release only: the acquire's reply
	phSlot  // --script-keys and --script-args: the word repeats once per slot, 1..limit
	numPlaceholders
	phExpr // not a name: arithmetic over placeholders, in part.expr
)

var placeholderNames = map[string]placeholder{
	"key": phKey, "member": phMember, "limit": phLimit, "burst": phBurst, "rate_per_s": phRatePerS,
	"cost": phCost, "window_ms": phWindowMs, "window_s": phWindowS, "window_us": phWindowUs, "window_ns": phWindowNs,
	"stale_after_ms": phStaleAfterMs, "stale_after_s": phStaleAfterS,
	"now_ms": phNowMs, "now_s": phNowS, "now_us": phNowUs, "now_ns": phNowNs, "now_s_int": phNowSInt,
	"window_index": phWindowIndex, "prev_window_index": phPrevWindowIndex, "window_start_ms": phWindowStartMs,
	"reply": phReply, "slot": phSlot,
}

// Placeholders lists the placeholder names in the order the help text gives them.
func Placeholders() []string {
	names := make([]string, 0, len(placeholderNames))
	for n := range placeholderNames {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return placeholderNames[names[i]] < placeholderNames[names[j]] })
	return names
}

// name is the placeholder's name between braces.
func (p placeholder) name() string {
	for n, q := range placeholderNames {
		if q == p {
			return n
		}
	}
	return ""
}

// static reports whether a placeholder's value is the same on every call, so Bind can fold it.
func (p placeholder) static() bool {
	switch p {
	case phLimit, phBurst, phRatePerS, phCost, phWindowMs, phWindowS, phWindowUs, phWindowNs, phStaleAfterMs, phStaleAfterS:
		return true
	}
	return false
}

// clientTime reports whether a placeholder carries the client's clock into the script.
func (p placeholder) clientTime() bool { return p >= phNowMs && p <= phWindowStartMs }

type part struct {
	text string // literal text (ph == literal)
	ph   placeholder
	expr *expr // ph == phExpr
}

// has reports whether the part is, or its arithmetic uses, a placeholder for which pred is true.
func (p part) has(pred func(placeholder) bool) bool {
	if p.ph != phExpr {
		return p.ph != literal && pred(p.ph)
	}
	found := false
	p.expr.walk(func(q placeholder) { found = found || pred(q) })
	return found
}

// Template is a parsed --script-keys, --script-args or --script-release value: words, each a
// sequence of literal text and placeholders.
type Template struct {
	flag  string
	text  string
	words [][]part
}

// Error is a template or expression the user must fix: it names the flag and the position.
type Error struct {
	Flag   string
	Column int // 1-based, in characters of the flag's value; 0 when not about one place
	Msg    string
}

func (e *Error) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s: column %d: %s", e.Flag, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Flag, e.Msg)
}

// Parse reads a template: words separated by spaces; a double-quoted stretch may hold spaces or
// be empty ("" is an empty word), with \" and \\ inside quotes; {name} is a placeholder, {{ and }}
// are literal braces.
func Parse(flag, text string) (*Template, error) {
	t := &Template{flag: flag, text: text}
	runes := []rune(text)
	errAt := func(i int, format string, a ...any) error {
		return &Error{Flag: flag, Column: i + 1, Msg: fmt.Sprintf(format, a...)}
	}
	i := 0
	for {
		for i < len(runes) && isSpace(runes[i]) {
			i++
		}
		if i == len(runes) {
			break
		}
		var word []part
		var lit strings.Builder
		flush := func() {
			if lit.Len() > 0 {
				word = append(word, part{text: lit.String()})
				lit.Reset()
			}
		}
		inQuote, quoteAt, quoted := false, 0, false
		for i < len(runes) && (inQuote || !isSpace(runes[i])) {
			r := runes[i]
			switch {
			case r == '"':
				inQuote, quoteAt, quoted = !inQuote, i, true
				i++
			case inQuote && r == '\\' && i+1 < len(runes) && (runes[i+1] == '"' || runes[i+1] == '\\'):
				lit.WriteRune(runes[i+1])
				i += 2
			case r == '{' && i+1 < len(runes) && runes[i+1] == '{':
				lit.WriteRune('{')
				i += 2
			case r == '}' && i+1 < len(runes) && runes[i+1] == '}':
				lit.WriteRune('}')
				i += 2
			case r == '{':
				// Up to the closing brace, spaces included: {now_ms + window_ms} is one placeholder.
				end := i + 1
				for end < len(runes) && runes[end] != '}' && runes[end] != '{' && runes[end] != '"' {
					end++
				}
				if end == len(runes) || runes[end] != '}' {
					return nil, errAt(i, "unclosed { (a literal brace is written {{)")
				}
				p, err := parsePlaceholder(flag, runes[i+1:end], i+1)
				if err != nil {
					return nil, err
				}
				flush()
				word = append(word, p)
				i = end + 1
			default:
				lit.WriteRune(r)
				i++
			}
		}
		if inQuote {
			return nil, errAt(quoteAt, "unbalanced double quote")
		}
		flush()
		if len(word) == 0 && quoted {
			word = []part{{text: ""}} // "" is an empty argument, not nothing
		}
		t.words = append(t.words, word)
	}
	return t, nil
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

// parsePlaceholder reads what stands between braces, which starts at column start: a name, or
// arithmetic over numbers and numeric placeholders.
func parsePlaceholder(flag string, body []rune, start int) (part, error) {
	name := string(body)
	if ph, ok := placeholderNames[name]; ok {
		return part{ph: ph}, nil
	}
	bare := true
	for _, r := range body {
		bare = bare && (r == '_' || r >= 'a' && r <= 'z')
	}
	if bare {
		return part{}, &Error{Flag: flag, Column: start, Msg: fmt.Sprintf("unknown placeholder {%s}; known: {%s}", name, strings.Join(Placeholders(), "} {"))}
	}
	e, err := parseExpr(flag, body, start)
	if err != nil {
		return part{}, err
	}
	if e.op == opPlaceholder {
		return part{ph: e.ph}, nil // { now_ms } is {now_ms}
	}
	return part{ph: phExpr, expr: e}, nil
}

// String is the template as given.
func (t *Template) String() string { return t.text }

// Len is the number of words.
func (t *Template) Len() int { return len(t.words) }

// uses reports whether any word uses a placeholder for which pred is true, alone or in arithmetic.
func (t *Template) uses(pred func(placeholder) bool) bool {
	for _, w := range t.words {
		for _, p := range w {
			if p.has(pred) {
				return true
			}
		}
	}
	return false
}

// usesPlaceholder reports whether the template uses p.
func (t *Template) usesPlaceholder(p placeholder) bool {
	return t.uses(func(q placeholder) bool { return q == p })
}

// UsesMember reports whether the template passes {member}.
func (t *Template) UsesMember() bool {
	return t.uses(func(p placeholder) bool { return p == phMember })
}

// UsesClientTime reports whether the template passes the client's clock ({now_*} or a window
// derived from it), so the script's time is the client's.
func (t *Template) UsesClientTime() bool { return t.uses(placeholder.clientTime) }

// wordUses reports whether word i contains p.
func (t *Template) wordUses(i int, p placeholder) bool {
	return wordHas(t.words[i], p)
}

// literalWord returns word i's text when it has no placeholder.
func (t *Template) literalWord(i int) (string, bool) {
	var b strings.Builder
	for _, p := range t.words[i] {
		if p.ph != literal {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// Static holds the values that are the same on every call; Bind folds them into the template.
type Static struct {
	Limit, Burst, Cost int64
	RatePerS           float64
	Window, StaleAfter time.Duration
}

// Call holds what changes from call to call.
type Call struct {
	Key, Member string
	Now         time.Time
	Reply       string // a release's: the acquire's reply as text (ReplyText)
}

// ReplyText is a reply as {reply} passes it: a string or a number as its text, an array as its
// first element's; anything else (nil) is empty.
func ReplyText(reply any) string {
	if arr, ok := reply.([]any); ok {
		if len(arr) == 0 {
			return ""
		}
		reply = arr[0]
	}
	switch v := reply.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// Bound is a template with its static placeholders folded into text: expanding it costs only
// the per-call values.
type Bound struct {
	words    []boundWord
	windowMs int64
}

type boundWord struct {
	text  string // the whole word when it has no per-call placeholder
	parts []part // otherwise: literal text and per-call placeholders
}

// Bind folds the static values into the template. Its only error is arithmetic that divides by
// a fixed value of zero ({x / limit} with --limit 0), which the flag's column names.
func (t *Template) Bind(s Static) (*Bound, error) {
	b := &Bound{windowMs: max(1, s.Window.Milliseconds())}
	for _, w := range t.words {
		if !wordHas(w, phSlot) {
			if err := b.bindWord(t.flag, w, s, 0); err != nil {
				return nil, err
			}
			continue
		}
		for slot := int64(1); slot <= s.Limit; slot++ {
			if err := b.bindWord(t.flag, w, s, slot); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func wordHas(w []part, ph placeholder) bool {
	for _, p := range w {
		if p.has(func(q placeholder) bool { return q == ph }) {
			return true
		}
	}
	return false
}

// bindWord appends word w with the static values (and slot, for {slot}) folded in.
func (b *Bound) bindWord(flag string, w []part, s Static, slot int64) error {
	known := func(p placeholder) (number, bool) {
		if p == phSlot {
			return intNum(slot), true
		}
		if p.static() {
			return staticNumber(p, s), true
		}
		return number{}, false
	}
	var parts []part
	for _, p := range w {
		switch {
		case p.ph == phSlot:
			p = part{text: strconv.FormatInt(slot, 10)}
		case p.ph.static():
			p = part{text: staticValue(p.ph, s)}
		case p.ph == phExpr:
			folded, err := p.expr.fold(known)
			if err != nil {
				return &Error{Flag: flag, Msg: fmt.Sprintf("an expression divides by a fixed value of zero with this run's values (%v)", err)}
			}
			if folded.op == opConst {
				p = part{text: folded.value.String()}
			} else {
				p = part{ph: phExpr, expr: folded}
			}
		}
		if p.ph == literal && len(parts) > 0 && parts[len(parts)-1].ph == literal {
			parts[len(parts)-1].text += p.text
			continue
		}
		parts = append(parts, p)
	}
	if len(parts) == 1 && parts[0].ph == literal {
		b.words = append(b.words, boundWord{text: parts[0].text})
		return nil
	}
	if len(parts) == 0 {
		parts = nil
	}
	b.words = append(b.words, boundWord{parts: parts})
	return nil
}

// staticValue is a fixed value as a word passes it; the seconds keep their fraction.
func staticValue(p placeholder, s Static) string {
	switch p {
	case phRatePerS:
		return strconv.FormatFloat(s.RatePerS, 'g', -1, 64)
	case phWindowS:
		return strconv.FormatFloat(s.Window.Seconds(), 'f', -1, 64)
	case phStaleAfterS:
		return strconv.FormatFloat(s.StaleAfter.Seconds(), 'f', -1, 64)
	}
	return staticNumber(p, s).String()
}

// staticNumber is a fixed value as arithmetic takes it.
func staticNumber(p placeholder, s Static) number {
	seconds := func(d time.Duration) number {
		if d%time.Second == 0 {
			return intNum(int64(d / time.Second))
		}
		return floatNum(d.Seconds())
	}
	switch p {
	case phLimit:
		return intNum(s.Limit)
	case phBurst:
		return intNum(s.Burst)
	case phCost:
		return intNum(s.Cost)
	case phRatePerS:
		if r := s.RatePerS; r == math.Trunc(r) && math.Abs(r) < 1<<53 {
			return intNum(int64(r))
		}
		return floatNum(s.RatePerS)
	case phWindowMs:
		return intNum(s.Window.Milliseconds())
	case phWindowS:
		return seconds(s.Window)
	case phWindowUs:
		return intNum(s.Window.Microseconds())
	case phWindowNs:
		return intNum(s.Window.Nanoseconds())
	case phStaleAfterMs:
		return intNum(s.StaleAfter.Milliseconds())
	case phStaleAfterS:
		return seconds(s.StaleAfter)
	}
	return number{}
}

// Len is the number of words.
func (b *Bound) Len() int { return len(b.words) }

// values computes each per-call placeholder at most once per call.
type values struct {
	call     *Call
	windowMs int64
	cache    [numPlaceholders]string
	have     [numPlaceholders]bool
}

func (v *values) get(p placeholder) string {
	switch p {
	case phKey:
		return v.call.Key
	case phMember:
		return v.call.Member
	case phReply:
		return v.call.Reply
	}
	if v.have[p] {
		return v.cache[p]
	}
	var s string
	if p == phNowS {
		us := v.call.Now.UnixMicro()
		frac := strconv.FormatInt(1_000_000+us%1_000_000, 10)[1:] // six digits, zero-padded
		s = strconv.FormatInt(us/1_000_000, 10) + "." + frac
	} else {
		s = v.num(p).String()
	}
	v.cache[p], v.have[p] = s, true
	return s
}

// num is a per-call placeholder's value as a number.
func (v *values) num(p placeholder) number {
	now := v.call.Now
	switch p {
	case phNowMs:
		return intNum(now.UnixMilli())
	case phNowUs:
		return intNum(now.UnixMicro())
	case phNowNs:
		return intNum(now.UnixNano())
	case phNowS:
		return floatNum(float64(now.UnixMicro()) / 1e6)
	case phNowSInt:
		return intNum(floorDiv(now.UnixMilli(), 1000))
	case phWindowIndex:
		return intNum(floorDiv(now.UnixMilli(), v.windowMs))
	case phPrevWindowIndex:
		return intNum(floorDiv(now.UnixMilli(), v.windowMs) - 1)
	case phWindowStartMs:
		return intNum(floorDiv(now.UnixMilli(), v.windowMs) * v.windowMs)
	}
	return number{}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// text is one part's expansion for the call.
func (v *values) text(p *part) string {
	switch p.ph {
	case literal:
		return p.text
	case phExpr:
		return p.expr.eval(v.num).String()
	}
	return v.get(p.ph)
}

func (b *Bound) expandWord(w *boundWord, v *values) string {
	if w.parts == nil {
		return w.text
	}
	if len(w.parts) == 1 {
		return v.text(&w.parts[0])
	}
	var buf [8]string
	texts, n := buf[:0], 0
	for i := range w.parts {
		t := v.text(&w.parts[i])
		texts, n = append(texts, t), n+len(t)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, t := range texts {
		sb.WriteString(t)
	}
	return sb.String()
}

// AppendStrings appends the expanded words for one call to dst.
func (b *Bound) AppendStrings(dst []string, c *Call) []string {
	v := values{call: c, windowMs: b.windowMs}
	return b.appendStrings(dst, &v)
}

func (b *Bound) appendStrings(dst []string, v *values) []string {
	for i := range b.words {
		dst = append(dst, b.expandWord(&b.words[i], v))
	}
	return dst
}

func (b *Bound) appendAny(dst []any, v *values) []any {
	for i := range b.words {
		dst = append(dst, b.expandWord(&b.words[i], v))
	}
	return dst
}
