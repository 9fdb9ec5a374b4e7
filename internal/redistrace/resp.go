package redistrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The proxy reads RESP (2 and 3) as it forwards it: each frame's bytes go on unchanged, and
// what they say is read on the way (a command's arguments, a reply's value).

// maxFrameElems bounds an aggregate's length and maxBulk a string's, against a stream that is
// not RESP: past them the connection is only forwarded, no longer read.
const (
	maxFrameElems = 1 << 24
	maxBulk       = 512 << 20
)

var errNotRESP = errors.New("not RESP")

// frameReader reads frames from r, keeping each one's bytes.
type frameReader struct {
	r   *bufio.Reader
	raw []byte
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next reads one frame: its value and its bytes (valid until the next call). A push (RESP3 '>')
// says the frame answers no command.
func (f *frameReader) next() (v any, raw []byte, push bool, err error) {
	f.raw = f.raw[:0]
	first, err := f.r.Peek(1)
	if err != nil {
		return nil, nil, false, err
	}
	if c := first[0]; c != '*' && c != '>' && c != '$' && c != '+' && c != '-' && c != ':' && c != '_' && c != ',' &&
		c != '#' && c != '!' && c != '=' && c != '(' && c != '%' && c != '~' && c != '|' {
		// An inline command (PING\r\n): its words.
		line, err := f.line()
		if err != nil {
			return nil, nil, false, err
		}
		var args []any
		for _, w := range strings.Fields(string(line)) {
			args = append(args, w)
		}
		return args, f.raw, false, nil
	}
	push = first[0] == '>'
	v, err = f.value()
	return v, f.raw, push, err
}

// line reads up to CRLF, keeping the bytes, and returns the line without it.
func (f *frameReader) line() ([]byte, error) {
	start := len(f.raw)
	for {
		chunk, err := f.r.ReadSlice('\n')
		f.raw = append(f.raw, chunk...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
	line := f.raw[start:]
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, errNotRESP
	}
	return line[:len(line)-2], nil
}

func (f *frameReader) length(line []byte, most int) (int, error) {
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n > most {
		return 0, errNotRESP
	}
	return n, nil
}

// value reads one value: an int64, a string, nil, []any, map[any]any, bool, or a ReplyError.
func (f *frameReader) value() (any, error) {
	line, err := f.line()
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, errNotRESP
	}
	switch line[0] {
	case '+', ',', '(':
		return string(line[1:]), nil
	case '-':
		return ReplyError(line[1:]), nil
	case ':':
		n, err := strconv.ParseInt(string(line[1:]), 10, 64)
		if err != nil {
			return nil, errNotRESP
		}
		return n, nil
	case '_':
		return nil, nil
	case '#':
		return len(line) > 1 && line[1] == 't', nil
	case '$', '!', '=':
		n, err := f.length(line, maxBulk)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		start := len(f.raw)
		f.raw = append(f.raw, make([]byte, n+2)...)
		if _, err := io.ReadFull(f.r, f.raw[start:]); err != nil {
			return nil, err
		}
		s := string(f.raw[start : start+n])
		switch line[0] {
		case '!':
			return ReplyError(s), nil
		case '=':
			if len(s) >= 4 && s[3] == ':' {
				return s[4:], nil
			}
		}
		return s, nil
	case '*', '~', '>':
		n, err := f.length(line, maxFrameElems)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		arr := make([]any, n)
		for i := range arr {
			if arr[i], err = f.value(); err != nil {
				return nil, err
			}
		}
		return arr, nil
	case '%', '|':
		n, err := f.length(line, maxFrameElems)
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, max(n, 0))
		for range n {
			k, err := f.value()
			if err != nil {
				return nil, err
			}
			if m[fmt.Sprint(k)], err = f.value(); err != nil {
				return nil, err
			}
		}
		if line[0] == '|' { // attributes: about the reply that follows, which is the reply
			return f.value()
		}
		return m, nil
	}
	return nil, errNotRESP
}

// commandArgs are a command frame's arguments as strings, its name upper case; ok is false for
// a frame that is not a command.
func commandArgs(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, false
	}
	args := make([]string, len(arr))
	for i, a := range arr {
		s, ok := a.(string)
		if !ok {
			return nil, false
		}
		args[i] = s
	}
	args[0] = upper(args[0])
	return args, true
}
