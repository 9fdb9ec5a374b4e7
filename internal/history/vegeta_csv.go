package history

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// vegetaCSV reads `vegeta encode --to csv`: twelve columns, no header row (doc.go). A quoted
// field can hold a newline (an error's text), so records are read by encoding/csv, not by line.
type vegetaCSV struct {
	*fileCtx
	src     *tailReader
	r       *csv.Reader
	headers []byte
}

// The columns vegeta's CSV encoder writes (lib/results.go, NewCSVEncoder).
const (
	csvTimestamp = iota
	csvCode
	csvLatency
	csvBytesOut
	csvBytesIn
	csvError
	csvBody
	csvAttack
	csvSeq
	csvMethod
	csvURL
	csvHeaders
	csvColumns
)

func newVegetaCSV(c *fileCtx) *vegetaCSV {
	src := &tailReader{r: c.lines.r}
	r := csv.NewReader(src)
	r.FieldsPerRecord = csvColumns
	r.ReuseRecord = true
	return &vegetaCSV{fileCtx: c, src: src, r: r}
}

func (d *vegetaCSV) next(rec *Record) error {
	fields, err := d.r.Read()
	if err == io.EOF {
		return io.EOF
	}
	var perr *csv.ParseError
	if err == nil {
		line, _ := d.r.FieldPos(0)
		d.lines.line = int64(line)
	} else if errors.As(err, &perr) {
		d.lines.line, err = int64(perr.StartLine), perr.Err
	}
	d.stats.Lines++
	// vegeta ends every record with a newline: a last one without it was cut, even where the
	// cut left twelve fields (inside the headers' base64).
	if err == nil && d.src.eof && d.r.InputOffset() == d.src.n && d.src.last != '\n' {
		err = errors.New("the file ends inside this record")
	}
	if err == nil {
		err = d.parse(fields, rec)
	}
	if err != nil {
		// The broken record was cut when the file ends with it, without a newline.
		d.lines.cut = d.src.eof && d.r.InputOffset() == d.src.n && d.src.last != '\n'
		return d.bad(err)
	}
	return nil
}

func (d *vegetaCSV) parse(f []string, rec *Record) error {
	d.prepare(rec, len(d.wanted))
	ts, err := strconv.ParseInt(f[csvTimestamp], 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp %q: not Unix nanoseconds", f[csvTimestamp])
	}
	code, err := strconv.ParseUint(f[csvCode], 10, 16)
	if err != nil {
		return fmt.Errorf("code %q: not a status", f[csvCode])
	}
	latency, err := strconv.ParseInt(f[csvLatency], 10, 64)
	if err != nil {
		return fmt.Errorf("latency %q: not nanoseconds", f[csvLatency])
	}
	seq, err := strconv.ParseUint(f[csvSeq], 10, 63)
	if err != nil {
		return fmt.Errorf("seq %q: not a sequence number", f[csvSeq])
	}
	rec.Status, rec.Seq = int(code), int64(seq)
	rec.URL = d.intern.get([]byte(f[csvURL]))
	// Go's zero time has no Unix nanoseconds; vegeta writes what UnixNano returns for it.
	switch {
	case ts <= 0:
		rec.Flags |= StartUnknown
	case latency < 0:
		rec.Flags |= Backwards
	default:
		rec.StartNs, rec.EndNs = ts, ts+latency
	}
	if len(d.wanted) > 0 && f[csvHeaders] != "" {
		if err := d.readHeaders(f[csvHeaders], rec); err != nil {
			return err
		}
	}
	d.setKey(rec)
	return nil
}

// readHeaders decodes the base64 header block ("Name: value\r\n" lines, as http.Header.Write
// writes them) and keeps the first value of each wanted name.
func (d *vegetaCSV) readHeaders(b64 string, rec *Record) error {
	n := base64.StdEncoding.DecodedLen(len(b64))
	if cap(d.headers) < n {
		d.headers = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.headers[:n], []byte(b64))
	if err != nil {
		return fmt.Errorf("headers: %v", err)
	}
	block := d.headers[:n]
	for len(block) > 0 {
		line := block
		if i := bytes.IndexByte(block, '\n'); i >= 0 {
			line, block = block[:i], block[i+1:]
		} else {
			block = nil
		}
		line = bytes.TrimRight(line, "\r")
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			continue // the blank line that ends the block
		}
		if i := d.wantedIndex(line[:colon]); i >= 0 && rec.Headers[i] == "" {
			rec.Headers[i] = d.intern.get(bytes.TrimSpace(line[colon+1:]))
		}
	}
	return nil
}

// tailReader remembers the last byte it passed on and whether its source ended, so that a
// broken last CSV record can be told cut (no final newline) from malformed.
type tailReader struct {
	r    io.Reader
	n    int64 // bytes passed on
	last byte
	eof  bool
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.last = p[n-1]
		t.n += int64(n)
	}
	if err == io.EOF {
		t.eof = true
	}
	return n, err
}
