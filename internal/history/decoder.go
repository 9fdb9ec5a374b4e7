package history

import (
	"bytes"
	"errors"
	"io"
)

// decoder reads one file's records in the order the file holds them.
type decoder interface {
	// next fills rec's fields but File, or returns io.EOF after the last record; a malformed
	// line is a *badLine. A cut last line ends the file (counted Truncated).
	next(rec *Record) error
}

// badLine is a line that is not a record of the file's format.
type badLine struct {
	line int64
	err  error
}

func (e *badLine) Error() string { return e.err.Error() }

// fileCtx is what a decoder shares with its file: the lines, the options, the counts.
type fileCtx struct {
	lines  *lineReader
	stats  *Stats
	keyBy  KeyBy
	wanted []string // response headers to read: Options.Headers, then a header key's
	intern *interner
}

// bad turns a parse error into a *badLine, or into the end of the file when the line is the
// last and was cut (no newline): a tool stopped mid-write.
func (c *fileCtx) bad(err error) error {
	if c.lines.cut {
		c.stats.Truncated++
		return io.EOF
	}
	return &badLine{line: c.lines.line, err: err}
}

// prepare empties rec's per-record fields and sizes its Headers for the wanted names.
func (c *fileCtx) prepare(rec *Record, n int) {
	headers := rec.Headers[:0]
	for range n {
		headers = append(headers, "")
	}
	*rec = Record{Headers: headers, Seq: -1, Line: c.lines.line}
}

// setKey keys rec by the options: its URL, a header's value (the last wanted), or none.
func (c *fileCtx) setKey(rec *Record) {
	switch c.keyBy.By {
	case KeyByURL:
		rec.Key = rec.URL
	case KeyByHeader:
		rec.Key = rec.Headers[len(c.wanted)-1]
	}
}

// wantedIndex is the index of a wanted header named name (any case), or -1.
func (c *fileCtx) wantedIndex(name []byte) int {
	for i, w := range c.wanted {
		if bytes.EqualFold(name, []byte(w)) {
			return i
		}
	}
	return -1
}

// blank reports a line of white space only, which every format allows between records.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// interner keeps one copy of each string seen often (URLs, statuses, keys), up to a bound so
// that a file of unique URLs does not grow it without end.
type interner struct{ m map[string]string }

const internMax = 1 << 14

func newInterner() *interner { return &interner{m: make(map[string]string)} }

func (in *interner) get(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.m) < internMax {
		in.m[s] = s
	}
	return s
}

var errNoObject = errors.New("not a JSON object")
