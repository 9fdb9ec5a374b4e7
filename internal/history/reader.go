package history

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// File is one input of a Reader and what was read of it so far.
type File struct {
	Name   string
	Format Format
	CSV    bool       // vegeta's CSV encoding (FormatVegeta)
	Header *RunHeader // a limitctl file's header; nil in the other formats
	Stats  Stats
	// Traced are a traced run's lines after its calls (a limitctl file of hammer
	// --http-redis-trace), in the file's order, once it has been read.
	Traced []Traced
}

// Input is a named stream of records.
type Input struct {
	Name string
	R    io.Reader
}

// Reader returns the records of one or more files merged in time order (by Record.StartNs),
// one at a time, in memory bounded by the reorder window whatever the files' lengths.
//
// Each file is read in its own order, which is the order its tool finished requests in: a
// request's start comes up to its latency after later-started ones. A file's records wait in a
// window (Options.ReorderWindow, at most Options.ReorderMax of them) until no record still to
// come can start before them, and the files' heads are merged. A record that starts before one
// already returned (beyond the window) is returned flagged Late; one identical to a record
// returned at the same start (the same file given twice) is dropped and counted a duplicate.
// Every record is returned with its Flags: a judge counts those in NotJudged and judges the
// rest. Stats and Files count what each file held as it is read.
//
//	r, err := history.Open(paths, opts)
//	for r.Next() {
//		rec := r.Record()
//		...
//	}
//	err = r.Err()
type Reader struct {
	opts    Options
	files   []File
	streams []*stream
	closers []io.Closer
	err     error

	returned bool  // a record has been returned
	lastKey  int64 // the start of the last record returned
	recent   []fingerprint
	rec      *Record
}

// Open opens the named files ("-" is standard input); a gzip file (k6 writes one for a name
// ending .gz) is read through gzip.
func Open(paths []string, opts Options) (*Reader, error) {
	var inputs []Input
	var closers []io.Closer
	for _, p := range paths {
		if p == "-" {
			inputs = append(inputs, Input{Name: "standard input", R: os.Stdin})
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			closeAll(closers)
			return nil, err
		}
		closers = append(closers, f)
		inputs = append(inputs, Input{Name: p, R: f})
	}
	r, err := New(inputs, opts)
	if err != nil {
		closeAll(closers)
		return nil, err
	}
	r.closers = append(r.closers, closers...)
	return r, nil
}

// New reads inputs, each's format recognised from its first line unless opts.Format names it.
func New(inputs []Input, opts Options) (*Reader, error) {
	if len(inputs) == 0 {
		return nil, exitcode.Usagef("no record files given")
	}
	if opts.ReorderWindow <= 0 {
		opts.ReorderWindow = DefaultReorderWindow
	}
	if opts.ReorderMax <= 0 {
		opts.ReorderMax = DefaultReorderMax
	}
	r := &Reader{opts: opts, files: make([]File, len(inputs))}
	intern := newInterner()
	wanted := append([]string(nil), opts.Headers...)
	if opts.KeyBy.By == KeyByHeader {
		wanted = append(wanted, opts.KeyBy.Header)
	}
	for i, in := range inputs {
		f := &r.files[i]
		f.Name = in.Name
		src, closer, err := maybeGunzip(in.R)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("%s: %v", in.Name, err)
		}
		if closer != nil {
			r.closers = append(r.closers, closer)
		}
		c := &fileCtx{lines: newLineReader(src), stats: &f.Stats, keyBy: opts.KeyBy, wanted: wanted, intern: intern}
		dec, err := r.decoderFor(f, c)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.streams = append(r.streams, newStream(i, dec, opts))
	}
	return r, nil
}

// decoderFor recognises f's format (or takes the forced one) from its first line.
func (r *Reader) decoderFor(f *File, c *fileCtx) (decoder, error) {
	first, err := c.lines.first()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.Name, err)
	}
	format, csv := r.opts.Format, false
	if format == FormatAuto {
		if format, csv = detect(first); format == FormatAuto {
			if len(first) == 0 {
				return nil, exitcode.Usagef("%s: empty: no records to read", f.Name)
			}
			return nil, exitcode.Usagef("%s line 1: not a record of vegeta (JSON or CSV), k6 or limitctl; name one with --format", f.Name)
		}
	} else if format == FormatVegeta {
		_, csv = detect(first)
	}
	f.Format, f.CSV = format, csv
	if r.opts.KeyBy.By == KeyByHeader && format != FormatVegeta {
		return nil, exitcode.Usagef("--key-by %s: %s's %s records carry no response headers; use --key-by url or none",
			r.opts.KeyBy, f.Name, format)
	}
	switch {
	case format == FormatVegeta && csv:
		return newVegetaCSV(c), nil
	case format == FormatVegeta:
		return &vegetaJSON{fileCtx: c}, nil
	case format == FormatK6:
		return &k6JSON{fileCtx: c}, nil
	}
	h, err := readRunHeader(first)
	if err != nil {
		return nil, lineError(f.Name, 1, "limitctl", err)
	}
	f.Header = h
	return newLimitctlCalls(c, f, h), nil
}

// detect tells a format from a file's first line: vegeta's JSON starts with "attack" (easyjson
// writes its fields in order) or holds its fields, k6's has a "type" of Metric or Point, a
// limitctl file's header names its format; a line that starts with a number is vegeta's CSV.
func detect(first []byte) (Format, bool) {
	line := bytes.TrimSpace(first)
	switch {
	case len(line) == 0:
		return FormatAuto, false
	case '0' <= line[0] && line[0] <= '9' || line[0] == '-' && len(line) > 1 && '0' <= line[1] && line[1] <= '9':
		return FormatVegeta, true // a Unix time in ns; negative: Go's zero time
	case line[0] != '{':
		return FormatAuto, false
	}
	keys := map[string]bool{}
	var s scanner
	s.reset(line)
	_ = s.object(func(key []byte) error {
		k := string(key)
		keys[k] = true
		if k == "format" || k == "type" {
			v, err := s.str()
			keys[k+"="+string(v)] = true
			return err
		}
		_, err := s.skip()
		return err
	})
	switch {
	case keys["format="+RecordFormat]:
		return FormatLimitctl, false
	case keys["type=Metric"] || keys["type=Point"]:
		return FormatK6, false
	case keys["timestamp"] && keys["latency"] && keys["code"]:
		return FormatVegeta, false
	}
	return FormatAuto, false
}

// maybeGunzip buffers r, through gzip when it is a gzip stream.
func maybeGunzip(r io.Reader) (*bufio.Reader, io.Closer, error) {
	br := bufio.NewReaderSize(r, readBuffer)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		return bufio.NewReaderSize(z, readBuffer), z, nil
	}
	return br, nil, nil
}

// readBuffer is each file's read buffer, also the longest first line recognised whole.
const readBuffer = 1 << 20

// Files are the inputs, with what has been read of each.
func (r *Reader) Files() []File { return r.files }

// Stats are the counts over every file.
func (r *Reader) Stats() Stats {
	var total Stats
	for _, f := range r.files {
		total.add(f.Stats)
	}
	return total
}

// Err is the error that stopped Next, or nil at the end of the records.
func (r *Reader) Err() error { return r.err }

// Close closes the files Open opened.
func (r *Reader) Close() error {
	err := closeAll(r.closers)
	r.closers = nil
	return err
}

func closeAll(cs []io.Closer) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Next moves to the next record in time order and reports whether there was one; false at
// the end or on an error (Err).
func (r *Reader) Next() bool {
	for r.err == nil {
		var head *stream
		for _, s := range r.streams {
			if err := s.fill(); err != nil {
				if r.err = r.fail(s, err); r.err != nil {
					return false
				}
				head = nil
				break // a bad line skipped: look at every head again
			}
			if s.ready() && (head == nil || s.headKey() < head.headKey()) {
				head = s
			}
		}
		if head == nil {
			if r.anyPending() {
				continue
			}
			return false
		}
		key := head.headKey()
		rec := head.pop()
		rec.File = head.file
		r.rec = rec
		stats := &r.files[head.file].Stats
		if r.duplicate(key, rec) {
			stats.Duplicates++
			continue
		}
		switch {
		case rec.Flags&StartUnknown != 0: // ordered by the records read with it, never late
		case r.returned && key < r.lastKey:
			rec.Flags |= Late
			if stats.FirstLate == 0 {
				stats.FirstLate = rec.Line
			}
		default:
			r.lastKey, r.returned = key, true
		}
		stats.count(rec.Flags)
		return true
	}
	return false
}

// Record is the record Next moved to, valid until the next call to Next.
func (r *Reader) Record() *Record { return r.rec }

// anyPending reports whether a stream still has records to give (after a skipped bad line).
func (r *Reader) anyPending() bool {
	for _, s := range r.streams {
		if s.ready() || !s.done {
			return true
		}
	}
	return false
}

// fail turns a file's error into the Reader's: a malformed line names its file and line, or is
// counted and passed over with SkipBad (then nil).
func (r *Reader) fail(s *stream, err error) error {
	f := &r.files[s.file]
	var bad *badLine
	if errors.As(err, &bad) {
		if r.opts.SkipBad {
			f.Stats.Bad++
			return nil
		}
		return lineError(f.Name, bad.line, describe(f.Format, f.CSV), bad.err)
	}
	return fmt.Errorf("%s: %w", f.Name, err)
}

// fingerprint is what makes two records the same request.
type fingerprint struct {
	startNs, endNs int64
	seq            int64
	status         int
	flags          Flags
	decision       Decision
	worker         int
	url, key       string
	strategy       string
}

func fingerprintOf(rec *Record) fingerprint {
	return fingerprint{rec.StartNs, rec.EndNs, rec.Seq, rec.Status, rec.Flags, rec.Decision, rec.Worker,
		rec.URL, rec.Key, rec.Strategy}
}

// duplicate reports whether rec is identical to a record already returned at the same start,
// and remembers it otherwise.
func (r *Reader) duplicate(key int64, rec *Record) bool {
	if rec.Flags&StartUnknown != 0 {
		return false
	}
	switch {
	case !r.returned || key > r.lastKey:
		r.recent = r.recent[:0]
	case key < r.lastKey:
		return false // late: compared with nothing
	}
	fp := fingerprintOf(rec)
	for _, seen := range r.recent {
		if seen == fp {
			return true
		}
	}
	r.recent = append(r.recent, fp)
	return false
}
