package history

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// scanner reads the fields a format knows from one line of JSON without building a tree: a
// field's value is parsed only when the format asks for it, and everything else is skipped,
// though still checked against JSON's grammar, so a line encoding/json would refuse is refused.
// It is several times faster than decoding each line into a struct with encoding/json
// (BenchmarkDecode* in history_bench_test.go, and the encoding/json figure beside them).
type scanner struct {
	b     []byte
	i     int
	depth int
}

// maxDepth bounds nesting, as encoding/json's own limit does, so a hostile line cannot exhaust
// the stack.
const maxDepth = 10000

var errUnexpectedEnd = errors.New("unexpected end of line")

func (s *scanner) reset(b []byte) { s.b, s.i, s.depth = b, 0, 0 }

func (s *scanner) fail(what string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("%w: %s", errUnexpectedEnd, what)
	}
	return fmt.Errorf("%s at column %d (found %q)", what, s.i+1, s.b[s.i])
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end checks that nothing but white space follows the value.
func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.fail("unexpected data after the object")
	}
	return nil
}

// object reads an object, calling member for each key; member must read or skip the value. A
// key with escapes is passed unescaped.
func (s *scanner) object(member func(key []byte) error) error {
	s.ws()
	if !s.eat('{') {
		return s.fail("expected an object")
	}
	if s.depth++; s.depth > maxDepth {
		return s.fail("nested too deeply")
	}
	s.ws()
	if s.eat('}') {
		s.depth--
		return nil
	}
	for {
		s.ws()
		key, escaped, err := s.rawString()
		if err != nil {
			return err
		}
		if escaped {
			if key, err = unescape(key); err != nil {
				return err
			}
		}
		s.ws()
		if !s.eat(':') {
			return s.fail("expected ':' after an object key")
		}
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			s.depth--
			return nil
		}
		return s.fail("expected ',' or '}' in an object")
	}
}

// rawString reads a string and returns its bytes between the quotes as written, and whether
// they hold an escape. Its escapes are checked.
func (s *scanner) rawString() (raw []byte, escaped bool, err error) {
	if !s.eat('"') {
		return nil, false, s.fail("expected a string")
	}
	start := s.i
	for s.i < len(s.b) {
		// Most of a line is plain string bytes: pass them eight at a time, then one at a time.
		for s.i+8 <= len(s.b) && !hasSpecial(binary.LittleEndian.Uint64(s.b[s.i:])) {
			s.i += 8
		}
		for s.i < len(s.b) && !stringSpecial[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, escaped, nil
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.b) {
				s.i = len(s.b)
				return nil, false, s.fail("unterminated escape")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					s.i++
					return nil, false, s.fail(`bad \u escape`)
				}
				s.i += 6
			default:
				s.i++
				return nil, false, s.fail("bad escape")
			}
		default: // a control character
			return nil, false, s.fail("control character in a string")
		}
	}
	return nil, false, s.fail("unterminated string")
}

// hasSpecial reports whether any of the eight bytes in x is a quote, a backslash or a control
// character (the bit tricks of "Bit Twiddling Hacks": a byte equal to zero, or less than n).
func hasSpecial(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return zero(quote)|zero(backslash)|((x-ones*0x20)&^x&highs) != 0
}

// stringSpecial marks the bytes that end a string's plain run: the quote, the backslash and
// the control characters JSON forbids in a string.
var stringSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// str reads a string's value, unescaped (a fresh slice then; otherwise a slice of the line).
func (s *scanner) str() ([]byte, error) {
	raw, escaped, err := s.rawString()
	if err != nil || !escaped {
		return raw, err
	}
	return unescape(raw)
}

// unescape decodes a string's escaped bytes as encoding/json does (rare: URLs with & written by
// an HTML-escaping encoder, quotes in error messages).
func unescape(raw []byte) ([]byte, error) {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var out string
	if err := json.Unmarshal(quoted, &out); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// number reads a number as written, checked against JSON's grammar.
func (s *scanner) number() ([]byte, error) {
	start := s.i
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, s.fail("expected a number")
	}
	if s.eat('.') {
		if s.digits() == 0 {
			return nil, s.fail("expected a digit after the decimal point")
		}
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return nil, s.fail("expected a digit in the exponent")
		}
	}
	return s.b[start:s.i], nil
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// int reads an integer (a number with a fraction or an exponent is refused).
func (s *scanner) int() (int64, error) {
	start := s.i
	n, err := s.number()
	if err != nil {
		return 0, err
	}
	v, ok := parseInt(n)
	if !ok {
		s.i = start
		return 0, s.fail("expected an integer")
	}
	return v, nil
}

// parseInt parses an optionally negative decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		if len(b) > 18 {
			v, err := strconv.ParseInt(string(b), 10, 64)
			if neg {
				v = -v
			}
			return v, err == nil
		}
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// float reads any number.
func (s *scanner) float() (float64, error) {
	n, err := s.number()
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(string(n), 64)
}

// isNull reads a null if one is next.
func (s *scanner) isNull() bool {
	if s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// skip reads any value and returns its bytes as written.
func (s *scanner) skip() ([]byte, error) {
	start := s.i
	if s.i >= len(s.b) {
		return nil, s.fail("expected a value")
	}
	var err error
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, err = s.rawString()
	case c == '{':
		err = s.object(func([]byte) error { _, err := s.skip(); return err })
	case c == '[':
		err = s.array(func() error { _, err := s.skip(); return err })
	case c == '-' || '0' <= c && c <= '9':
		_, err = s.number()
	case s.literal("true"), s.literal("false"), s.literal("null"):
	default:
		err = s.fail("expected a value")
	}
	return s.b[start:s.i], err
}

func (s *scanner) literal(word string) bool {
	if s.i+len(word) <= len(s.b) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// array reads an array, calling elem for each element; elem must read or skip it.
func (s *scanner) array(elem func() error) error {
	if !s.eat('[') {
		return s.fail("expected an array")
	}
	if s.depth++; s.depth > maxDepth {
		return s.fail("nested too deeply")
	}
	s.ws()
	if s.eat(']') {
		s.depth--
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat(']') {
			s.depth--
			return nil
		}
		return s.fail("expected ',' or ']' in an array")
	}
}
