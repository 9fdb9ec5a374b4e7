package history

import (
	"errors"
	"fmt"
)

// vegetaJSON reads `vegeta encode --to json`: one object a line (doc.go has the fields).
type vegetaJSON struct {
	*fileCtx
	s scanner
}

func (d *vegetaJSON) next(rec *Record) error {
	for {
		line, err := d.lines.next()
		if err != nil {
			return err
		}
		d.stats.Lines++
		if blank(line) {
			continue
		}
		if err := d.parse(line, rec); err != nil {
			return d.bad(err)
		}
		return nil
	}
}

func (d *vegetaJSON) parse(line []byte, rec *Record) error {
	d.prepare(rec, len(d.wanted))
	var hasTime, hasLatency, hasCode bool
	var latency int64
	d.s.reset(line)
	err := d.s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "seq":
			var seq int64
			if seq, err = d.s.int(); err == nil && seq < 0 {
				err = errors.New("negative seq")
			}
			rec.Seq = seq
		case "code":
			var code int64
			if code, err = d.s.int(); err == nil && (code < 0 || code > 65535) {
				err = fmt.Errorf("code %d out of range", code)
			}
			rec.Status, hasCode = int(code), true
		case "timestamp":
			var ts []byte
			if ts, err = d.s.str(); err != nil {
				return err
			}
			ns, ok := parseRFC3339(ts)
			if !ok && !isZeroTime(ts) {
				return fmt.Errorf("timestamp %q is not an RFC 3339 time", ts)
			}
			rec.StartNs, hasTime = ns, ok
		case "latency":
			latency, err = d.s.int()
			hasLatency = true
		case "url":
			var url []byte
			if url, err = d.s.str(); err == nil {
				rec.URL = d.intern.get(url)
			}
		case "headers":
			err = d.headers(rec)
		default:
			_, err = d.s.skip()
		}
		return err
	})
	if err == nil {
		err = d.s.end()
	}
	if err != nil {
		return err
	}
	switch {
	case !hasTime:
		rec.Flags |= StartUnknown
	case !hasLatency:
		rec.Flags |= EndUnknown
	case latency < 0:
		rec.Flags |= Backwards
	default:
		rec.EndNs = rec.StartNs + latency
	}
	if !hasCode {
		rec.Flags |= StatusUnknown
	}
	d.setKey(rec)
	return nil
}

// headers reads the response headers, {"Name": ["value", ...]} or null, keeping the first value
// of each wanted name.
func (d *vegetaJSON) headers(rec *Record) error {
	if d.s.isNull() {
		return nil
	}
	return d.s.object(func(name []byte) error {
		i := d.wantedIndex(name)
		if d.s.isNull() {
			return nil
		}
		first := true
		return d.s.array(func() error {
			v, err := d.s.str()
			if err == nil && first && i >= 0 {
				rec.Headers[i] = d.intern.get(v)
			}
			first = false
			return err
		})
	})
}

// isZeroTime is Go's zero time.Time as MarshalJSON writes it: a result vegeta never timed.
func isZeroTime(ts []byte) bool { return string(ts) == "0001-01-01T00:00:00Z" }
