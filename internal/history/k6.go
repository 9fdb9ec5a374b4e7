package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// k6JSON reads `k6 run --out json=F`: a request is its http_reqs point and the http_req_*
// points written right after it with the same time and tags (doc.go says why, from k6's
// source); every other line (metric definitions, other metrics) is counted and passed over.
type k6JSON struct {
	*fileCtx
	s, tags scanner

	// The point just read.
	kind, metric  []byte
	time, tagsRaw []byte
	value         float64
	hasValue      bool
	hasData       bool
	pending       bool // a request's http_reqs point was read; its other points may follow
	req           k6Request
	deferred      error // a bad line met while a request was pending, returned after it
}

// k6Request is a request being assembled from its points.
type k6Request struct {
	line                                  int64
	time, tags                            []byte // copies: the line they came from is gone
	duration, sending, receiving          float64
	hasDuration, hasSending, hasReceiving bool
	status, url, name                     []byte // slices of tags, read when it is finished
	hasStatus, hasURL, hasName            bool
}

func (d *k6JSON) next(rec *Record) error {
	if d.deferred != nil {
		err := d.deferred
		d.deferred = nil
		return err
	}
	for {
		line, err := d.lines.next()
		if err == io.EOF && d.pending {
			return d.finish(rec)
		}
		if err != nil {
			return err
		}
		d.stats.Lines++
		if blank(line) {
			continue
		}
		if err := d.parse(line); err != nil {
			bad := d.bad(err)
			if !d.pending {
				return bad
			}
			d.deferred = bad
			return d.finish(rec)
		}
		switch {
		case string(d.kind) == "Metric":
			d.stats.Other++
		case d.pending && d.follows():
			d.absorb()
		case string(d.metric) == "http_reqs":
			if d.pending {
				err := d.finish(rec)
				d.begin()
				return err
			}
			d.begin()
		default:
			d.stats.Other++
			if d.pending {
				return d.finish(rec)
			}
		}
	}
}

// parse reads a line's envelope: {"type", "metric", "data": {"time", "value", "tags"}}.
func (d *k6JSON) parse(line []byte) error {
	d.kind, d.metric, d.time, d.tagsRaw, d.hasValue, d.hasData = nil, nil, nil, nil, false, false
	d.s.reset(line)
	err := d.s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			d.kind, err = d.s.str()
		case "metric":
			d.metric, err = d.s.str()
		case "data":
			d.hasData = true
			err = d.s.object(func(key []byte) error {
				var err error
				switch string(key) {
				case "time":
					d.time, err = d.s.str()
				case "value":
					d.value, err = d.s.float()
					d.hasValue = true
				case "tags":
					d.tagsRaw, err = d.s.skip()
				default:
					_, err = d.s.skip()
				}
				return err
			})
		default:
			_, err = d.s.skip()
		}
		return err
	})
	if err == nil {
		err = d.s.end()
	}
	switch {
	case err != nil:
		return err
	case string(d.kind) == "Metric":
		return nil
	case string(d.kind) != "Point":
		return fmt.Errorf(`"type" is %q, not "Point" or "Metric"`, d.kind)
	case d.metric == nil || !d.hasData || d.time == nil || !d.hasValue:
		return errors.New(`a point needs "metric" and "data" with "time" and "value"`)
	}
	return nil
}

// follows reports whether the point just read belongs to the pending request: one of the
// http_req_* metrics k6 writes after http_reqs, at the same time with the same tags.
func (d *k6JSON) follows() bool {
	return bytes.HasPrefix(d.metric, []byte("http_req_")) &&
		bytes.Equal(d.time, d.req.time) && bytes.Equal(d.tagsRaw, d.req.tags)
}

func (d *k6JSON) absorb() {
	switch string(d.metric) {
	case "http_req_duration":
		d.req.duration, d.req.hasDuration = d.value, true
	case "http_req_sending":
		d.req.sending, d.req.hasSending = d.value, true
	case "http_req_receiving":
		d.req.receiving, d.req.hasReceiving = d.value, true
	}
}

// begin starts a request at the http_reqs point just read.
func (d *k6JSON) begin() {
	r := &d.req
	r.line = d.lines.line
	r.time = append(r.time[:0], d.time...)
	r.tags = append(r.tags[:0], d.tagsRaw...)
	r.hasDuration, r.hasSending, r.hasReceiving = false, false, false
	d.pending = true
}

// finish writes the pending request into rec.
func (d *k6JSON) finish(rec *Record) error {
	d.pending = false
	r := &d.req
	d.prepare(rec, len(d.wanted))
	rec.Line = r.line
	endNs, ok := parseRFC3339(r.time)
	if !ok {
		return &badLine{line: r.line, err: fmt.Errorf("time %q is not an RFC 3339 time", r.time)}
	}
	if err := d.readTags(r); err != nil {
		return &badLine{line: r.line, err: fmt.Errorf("tags: %v", err)}
	}
	rec.EndNs = endNs
	if r.hasReceiving {
		rec.EndNs -= msToNs(r.receiving)
	}
	// Without a sending time the request's write was never reported (tracer.go: sending is 0
	// when WroteRequest was not called) and its duration starts at the response: no bound.
	if r.hasDuration && r.hasSending && r.sending > 0 {
		rec.StartNs = endNs - msToNs(r.duration)
	} else {
		rec.Flags |= StartUnknown
	}
	if rec.Flags == 0 && rec.EndNs < rec.StartNs {
		rec.Flags |= Backwards
	}
	switch {
	case !r.hasStatus:
		rec.Flags |= StatusUnknown
	default:
		status, err := strconv.Atoi(string(r.status))
		if err != nil || status < 0 || status > 999 {
			return &badLine{line: r.line, err: fmt.Errorf("status tag %q is not an HTTP status", r.status)}
		}
		rec.Status = status
	}
	switch {
	case r.hasURL:
		rec.URL = d.intern.get(r.url)
	case r.hasName:
		rec.URL = d.intern.get(r.name)
	}
	d.setKey(rec)
	return nil
}

// readTags reads the tags a request is judged by: status, url, name.
func (d *k6JSON) readTags(r *k6Request) error {
	r.hasStatus, r.hasURL, r.hasName = false, false, false
	d.tags.reset(r.tags)
	if len(r.tags) == 0 || d.tags.isNull() {
		return nil
	}
	return d.tags.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "status":
			r.status, err = d.tags.str()
			r.hasStatus = true
		case "url":
			r.url, err = d.tags.str()
			r.hasURL = true
		case "name":
			r.name, err = d.tags.str()
			r.hasName = true
		default:
			_, err = d.tags.skip()
		}
		return err
	})
}

// msToNs is a k6 duration (float milliseconds, metrics.D) in nanoseconds; exact for any
// duration under 104 days, where d/1e6 and back round-trips.
func msToNs(ms float64) int64 { return int64(math.Round(ms * 1e6)) }
