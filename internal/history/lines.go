package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxLine bounds one line: a record's response body can make a vegeta line long, but one line
// is all the memory a record takes.
const maxLine = 256 << 20

// lineReader hands out a file's lines one at a time, each valid until the next call.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer, assembled
	line int64  // the last line's number
	cut  bool   // the last line had no newline: the file ended inside it
}

func newLineReader(r *bufio.Reader) *lineReader { return &lineReader{r: r} }

// next returns the next line without its newline (and a CR before it), or io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	b, err := lr.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(lr.long) > maxLine {
				return nil, fmt.Errorf("line %d is longer than %d MiB", lr.line+1, maxLine>>20)
			}
			b, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	switch {
	case err == io.EOF && len(b) == 0:
		return nil, io.EOF
	case err == io.EOF:
		lr.cut = true
	case err != nil:
		return nil, err
	default:
		lr.cut = false
		b = b[:len(b)-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	lr.line++
	return b, nil
}

// first returns the file's first line (up to the buffer's size) without reading it.
func (lr *lineReader) first() ([]byte, error) {
	for n := 4 << 10; ; n *= 2 {
		b, err := lr.r.Peek(min(n, lr.r.Size()))
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return b[:i], nil
		}
		if err != nil || n >= lr.r.Size() {
			if err == io.EOF || errors.Is(err, bufio.ErrBufferFull) {
				err = nil
			}
			return b, err
		}
	}
}
