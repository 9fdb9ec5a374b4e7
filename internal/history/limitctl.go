package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// RecordFormat names a `hammer --record` file in its header's "format".
const RecordFormat = "limitctl-record"

// RecordSchemaVersion is the schema this package writes and the newest it reads. A field added
// is a contract from then on: add, never rename.
const RecordSchemaVersion = 1

// RunHeader is the first line of a `hammer --record` file: the run, and the limiter its calls
// are judged against, so that `judge F` can judge them again with no flags.
type RunHeader struct {
	Format        string `json:"format"` // RecordFormat
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"limitctl_version,omitempty"`
	RunID         string `json:"run_id"`
	// StartedUnixNs is the wall clock at the run's clock zero; a call's sent_us and received_us
	// count from it on the run's monotonic clock.
	StartedUnixNs int64 `json:"started_unix_ns"`

	Limiter      string `json:"limiter"` // the kind: concurrency, fixed-window, sliding-window, token-bucket
	Limit        int64  `json:"limit"`   // token bucket: the burst
	WindowUs     int64  `json:"window_us,omitempty"`
	HoldUs       int64  `json:"hold_us,omitempty"`
	StaleAfterUs int64  `json:"stale_after_us,omitempty"`
	WindowStart  string `json:"window_start,omitempty"` // any, epoch or first-hit
	// SkewUs is how far the workers' clocks were set apart (±), HorizonUs the calls' timeout:
	// what the evidence on the stamps allowed for.
	SkewUs    int64 `json:"skew_us,omitempty"`
	HorizonUs int64 `json:"horizon_us,omitempty"`

	Strategies []RecordedStrategy `json:"strategies"`
	// RedisTrace names how the HTTP targets' application was traced in its Redis (hammer
	// --http-redis-trace: monitor or proxy); its commands follow the calls (Traced lines).
	RedisTrace string `json:"redis_trace,omitempty"`
}

// RecordedStrategy is one strategy of the run.
type RecordedStrategy struct {
	Name   string `json:"name"`
	Target string `json:"target"` // TargetRedis or TargetHTTP
	URL    string `json:"url,omitempty"`
	Method string `json:"method,omitempty"`
	// FreshKeys: every call named a key of this run only ({key}), so the limiter held no
	// state from before it and refusals can be judged.
	FreshKeys bool `json:"fresh_keys,omitempty"`

	// How the hammer judged a Redis strategy's calls, so that judge judges them by the same
	// rules (an HTTP strategy's are judged over their calls' intervals).
	Clock        string `json:"clock,omitempty"`           // client, virtual or server: whose time the script used
	EpochAligned bool   `json:"epoch_aligned,omitempty"`   // a fixed window's windows start at multiples of the window
	FirstHit     bool   `json:"first_hit,omitempty"`       // ... at the call that opened each (--window-start first-hit)
	AdmitAt      bool   `json:"admit_at,omitempty"`        // each admit judged at the time its schedule answered
	QuantumUs    int64  `json:"time_quantum_us,omitempty"` // how finely the script was told the time
	// StaleUnitUs, NoStaleAfter, NoRelease and RefillStepUs are what the refusal judges
	// allowed the limiter (the unit it was told stale-after in, none told, a release by expiry,
	// a bucket refilled in steps).
	StaleUnitUs  int64 `json:"stale_unit_us,omitempty"`
	NoStaleAfter bool  `json:"no_stale_after,omitempty"`
	NoRelease    bool  `json:"no_release,omitempty"`
	RefillStepUs int64 `json:"refill_step_us,omitempty"`
	// RefusalsUnjudged says why its refusals prove nothing (its contract's), when they do not.
	RefusalsUnjudged string `json:"refusals_unjudged,omitempty"`
	// Shared: its evidence held other processes' calls too (--witness redis); this file holds
	// this process's only.
	Shared bool `json:"shared,omitempty"`
	// BeginUs is the run's start on the stamps' clock (Unix µs).
	BeginUs int64 `json:"begin_us,omitempty"`
}

// What a strategy called.
const (
	TargetRedis = "redis" // a script or commands on Redis
	TargetHTTP  = "http"  // an HTTP endpoint (hammer --http)
)

// Call is one call of the run: a line after the header.
type Call struct {
	Seq      int64  `json:"seq"` // per strategy, from 0, in the order the calls were sent
	Strategy string `json:"strategy"`
	Worker   int    `json:"worker"`
	Key      string `json:"key"`
	// SentUs is read before the call's first byte is written, ReceivedUs after its reply (or
	// its error) was read: microseconds on the run's clock.
	SentUs     int64  `json:"sent_us"`
	ReceivedUs int64  `json:"received_us"`
	Decision   string `json:"decision"`         // admit, refuse or error
	Status     int    `json:"status,omitempty"` // an HTTP call's status
	Reply      string `json:"reply,omitempty"`  // a Redis call's reply, as text
	Error      string `json:"error,omitempty"`
	// ReleaseSentUs and ReleaseReceivedUs bound a concurrency admit's release; absent while
	// it was held to the end or abandoned.
	ReleaseSentUs     int64 `json:"release_sent_us,omitempty"`
	ReleaseReceivedUs int64 `json:"release_received_us,omitempty"`
	Abandoned         bool  `json:"abandoned,omitempty"`

	// What the evidence was told of the call (for an HTTP target, the interval alone counts):
	// NowUs is the time the limiter was given (the worker's clock, its skew included; Unix
	// µs), StampHiUs the latest TIME the virtual clock may have answered it. An admit was
	// judged at JudgedMs (Unix ms; its time as the script could know it, or the time its
	// schedule answered), at most LateUs late, and over [JudgedSentUs, JudgedReceivedUs] where
	// that differs from its call's (a sliding window on the virtual clock: both clocks').
	NowUs            int64 `json:"now_us,omitempty"`
	StampHiUs        int64 `json:"stamp_hi_us,omitempty"`
	JudgedMs         int64 `json:"judged_ms,omitempty"`
	LateUs           int64 `json:"late_us,omitempty"`
	JudgedSentUs     int64 `json:"judged_sent_us,omitempty"`
	JudgedReceivedUs int64 `json:"judged_received_us,omitempty"`
	// ErrorKind classifies an error (timeout, reply, ...); ReleaseError is a release's that
	// failed (the slot held until stale-after). Cut: sent as the run ended, its reply never
	// read: no decision, though it may have run. FirstAttempt: an endpoint's request sent again
	// after its connection closed under it; this line is its first attempt, which may have been
	// decided (and admitted): no decision of its own, told only to the refusal judges.
	ErrorKind    string `json:"error_kind,omitempty"`
	ReleaseError string `json:"release_error,omitempty"`
	Cut          bool   `json:"cut,omitempty"`
	FirstAttempt bool   `json:"first_attempt,omitempty"`
}

// Traced is a line after a traced run's calls: one command the HTTP targets' application sent
// on the run's identities (Command), or what one target's commands showed (Summary, the JSON's
// per-strategy redis), each as the trace gives it.
type Traced struct {
	Command *TracedCommand  `json:"redis,omitempty"`
	Summary json.RawMessage `json:"redis_summary,omitempty"`
}

// TracedCommand is one command as Redis ran it: its target (a strategy's name), its name and
// arguments (each cut to MaxTracedArg bytes), keys, the connection that sent it, the node it ran
// on, when it ran and was answered (µs on the run's clock), its reply where known (and how),
// the script or transaction it ran in (In, Step) and whether a WATCH guarded it.
type TracedCommand struct {
	Strategy  string          `json:"strategy"`
	Cmd       string          `json:"cmd"`
	Args      []string        `json:"args"`
	Keys      []string        `json:"keys"`
	Client    string          `json:"client"`
	Node      int             `json:"node,omitempty"`
	Identity  int             `json:"identity,omitempty"`
	AtUs      int64           `json:"at_us"`
	RepliedUs int64           `json:"replied_us,omitempty"`
	Reply     json.RawMessage `json:"reply,omitempty"`
	ReplyFrom string          `json:"reply_from,omitempty"`
	In        string          `json:"in,omitempty"`
	Step      int64           `json:"step,omitempty"`
	Guarded   bool            `json:"guarded,omitempty"`
}

// MaxTracedArg is how much of an argument a traced command keeps.
const MaxTracedArg = 1024

// WriteTraced appends a traced line.
func (cw *CallWriter) WriteTraced(t Traced) error {
	line, err := json.Marshal(t)
	if err != nil {
		return err
	}
	cw.w.Write(line)
	return cw.w.WriteByte('\n')
}

// CallWriter writes a `hammer --record` file: the header, then one line per call.
type CallWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewCallWriter writes h (its Format and SchemaVersion filled in) and returns the writer of
// the calls. Flush when done.
func NewCallWriter(w io.Writer, h RunHeader) (*CallWriter, error) {
	h.Format, h.SchemaVersion = RecordFormat, RecordSchemaVersion
	line, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(line)
	if err := bw.WriteByte('\n'); err != nil {
		return nil, err
	}
	return &CallWriter{w: bw}, nil
}

// Write appends c as one line (by hand: a hot path of the hammer).
func (cw *CallWriter) Write(c *Call) error {
	b := append(cw.buf[:0], `{"seq":`...)
	b = strconv.AppendInt(b, c.Seq, 10)
	b = appendField(b, "strategy", c.Strategy)
	b = append(b, `,"worker":`...)
	b = strconv.AppendInt(b, int64(c.Worker), 10)
	b = appendField(b, "key", c.Key)
	b = append(b, `,"sent_us":`...)
	b = strconv.AppendInt(b, c.SentUs, 10)
	b = append(b, `,"received_us":`...)
	b = strconv.AppendInt(b, c.ReceivedUs, 10)
	b = appendField(b, "decision", c.Decision)
	if c.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(c.Status), 10)
	}
	if c.Reply != "" {
		b = appendField(b, "reply", c.Reply)
	}
	if c.Error != "" {
		b = appendField(b, "error", c.Error)
	}
	if c.ReleaseSentUs != 0 {
		b = append(b, `,"release_sent_us":`...)
		b = strconv.AppendInt(b, c.ReleaseSentUs, 10)
	}
	if c.ReleaseReceivedUs != 0 {
		b = append(b, `,"release_received_us":`...)
		b = strconv.AppendInt(b, c.ReleaseReceivedUs, 10)
	}
	if c.Abandoned {
		b = append(b, `,"abandoned":true`...)
	}
	b = appendInt(b, `,"now_us":`, c.NowUs)
	b = appendInt(b, `,"stamp_hi_us":`, c.StampHiUs)
	b = appendInt(b, `,"judged_ms":`, c.JudgedMs)
	b = appendInt(b, `,"late_us":`, c.LateUs)
	b = appendInt(b, `,"judged_sent_us":`, c.JudgedSentUs)
	b = appendInt(b, `,"judged_received_us":`, c.JudgedReceivedUs)
	if c.ErrorKind != "" {
		b = appendField(b, "error_kind", c.ErrorKind)
	}
	if c.ReleaseError != "" {
		b = appendField(b, "release_error", c.ReleaseError)
	}
	if c.Cut {
		b = append(b, `,"cut":true`...)
	}
	if c.FirstAttempt {
		b = append(b, `,"first_attempt":true`...)
	}
	b = append(b, "}\n"...)
	cw.buf = b
	_, err := cw.w.Write(b)
	return err
}

// Flush writes what is buffered.
func (cw *CallWriter) Flush() error { return cw.w.Flush() }

// appendInt appends a number field unless it is 0 (omitted, as encoding/json's omitempty).
func appendInt(b []byte, field string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, field...), v, 10)
}

func appendField(b []byte, name, value string) []byte {
	b = append(append(append(b, `,"`...), name...), `":`...)
	return appendJSONString(b, value)
}

// appendJSONString quotes s as JSON does (invalid UTF-8 becomes U+FFFD, as encoding/json
// writes it).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	plain := 0 // the bytes before the first that needs escaping, copied at once
	for plain < len(s) && s[plain] >= 0x20 && s[plain] < utf8.RuneSelf && s[plain] != '"' && s[plain] != '\\' {
		plain++
	}
	b = append(b, s[:plain]...)
	for i := plain; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
			i++
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return append(b, '"')
}

// readRunHeader reads a limitctl file's first line.
func readRunHeader(line []byte) (*RunHeader, error) {
	var h RunHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("the header: %v", err)
	}
	switch {
	case h.Format != RecordFormat:
		return nil, fmt.Errorf(`the header's "format" is %q, not %q`, h.Format, RecordFormat)
	case h.SchemaVersion < 1:
		return nil, errors.New(`the header has no "schema_version"`)
	case h.SchemaVersion > RecordSchemaVersion:
		return nil, fmt.Errorf("schema_version %d is newer than this limitctl reads (%d): upgrade limitctl",
			h.SchemaVersion, RecordSchemaVersion)
	}
	return &h, nil
}

// limitctlCalls reads the calls after a limitctl file's header.
type limitctlCalls struct {
	*fileCtx
	file   *File // the traced lines are kept in it
	s      scanner
	header *RunHeader
	urls   map[string]string // strategy name -> its URL, for --key-by url
}

func newLimitctlCalls(c *fileCtx, f *File, h *RunHeader) *limitctlCalls {
	urls := make(map[string]string, len(h.Strategies))
	for _, s := range h.Strategies {
		urls[s.Name] = s.URL
	}
	return &limitctlCalls{fileCtx: c, file: f, header: h, urls: urls}
}

func (d *limitctlCalls) next(rec *Record) error {
	for {
		line, err := d.lines.next()
		if err != nil {
			return err
		}
		d.stats.Lines++
		if d.lines.line == 1 {
			d.stats.Other++ // the header, read when the file was opened
			continue
		}
		if blank(line) {
			continue
		}
		if traced, ok := d.traced(line); ok {
			if traced != nil {
				d.file.Traced = append(d.file.Traced, *traced)
			}
			d.stats.Other++
			continue
		}
		if err := d.parse(line, rec); err != nil {
			return d.bad(err)
		}
		return nil
	}
}

// traced reads a traced line (a traced run's command or summary, after its calls); ok is false
// for any other line. A traced line that does not read is skipped (nil): the calls are judged
// without it.
func (d *limitctlCalls) traced(line []byte) (*Traced, bool) {
	trimmed := bytes.TrimLeft(line, " \t")
	if !bytes.HasPrefix(trimmed, []byte(`{"redis":`)) && !bytes.HasPrefix(trimmed, []byte(`{"redis_summary":`)) {
		return nil, false
	}
	var t Traced
	if json.Unmarshal(line, &t) != nil {
		return nil, true
	}
	return &t, true
}

func (d *limitctlCalls) parse(line []byte, rec *Record) error {
	d.prepare(rec, len(d.wanted))
	var hasSent, hasReceived, hasDecision bool
	var sentUs, receivedUs, releaseSentUs, releaseReceivedUs, judgedSentUs, judgedReceivedUs int64
	var key []byte
	d.s.reset(line)
	err := d.s.object(func(name []byte) error {
		var err error
		var v []byte
		switch string(name) {
		case "seq":
			rec.Seq, err = d.s.int()
		case "strategy":
			if v, err = d.s.str(); err == nil {
				rec.Strategy = d.intern.get(v)
			}
		case "worker":
			var w int64
			w, err = d.s.int()
			rec.Worker = int(w)
		case "key":
			key, err = d.s.str()
		case "sent_us":
			sentUs, err = d.s.int()
			hasSent = true
		case "received_us":
			receivedUs, err = d.s.int()
			hasReceived = true
		case "decision":
			if v, err = d.s.str(); err == nil {
				var ok bool
				if rec.Decision, ok = parseDecision(v); !ok {
					err = fmt.Errorf("decision %q: want admit, refuse or error", v)
				}
				hasDecision = true
			}
		case "status":
			var st int64
			st, err = d.s.int()
			rec.Status = int(st)
		case "reply":
			if v, err = d.s.str(); err == nil {
				rec.Reply = d.intern.get(v)
			}
		case "release_sent_us":
			releaseSentUs, err = d.s.int()
		case "release_received_us":
			releaseReceivedUs, err = d.s.int()
		case "error":
			if v, err = d.s.str(); err == nil {
				rec.Error = d.intern.get(v)
			}
		case "error_kind":
			if v, err = d.s.str(); err == nil {
				rec.ErrorKind = d.intern.get(v)
			}
		case "release_error":
			if v, err = d.s.str(); err == nil {
				rec.ReleaseError = d.intern.get(v)
			}
		case "abandoned":
			rec.Abandoned, err = d.s.bool()
		case "cut":
			rec.Cut, err = d.s.bool()
		case "first_attempt":
			rec.FirstAttempt, err = d.s.bool()
		case "now_us":
			rec.NowUs, err = d.s.int()
		case "stamp_hi_us":
			rec.StampHiUs, err = d.s.int()
		case "judged_ms":
			rec.JudgedMs, err = d.s.int()
		case "late_us":
			rec.LateUs, err = d.s.int()
		case "judged_sent_us":
			judgedSentUs, err = d.s.int()
		case "judged_received_us":
			judgedReceivedUs, err = d.s.int()
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
	if !hasDecision {
		return errors.New(`a call needs a "decision"`)
	}
	base := d.header.StartedUnixNs
	switch {
	case !hasSent:
		rec.Flags |= StartUnknown
	case !hasReceived:
		rec.Flags |= EndUnknown
	case receivedUs < sentUs:
		rec.Flags |= Backwards
	default:
		rec.StartNs, rec.EndNs = base+sentUs*1000, base+receivedUs*1000
	}
	if releaseSentUs != 0 && releaseReceivedUs >= releaseSentUs {
		rec.ReleaseStartNs, rec.ReleaseEndNs = base+releaseSentUs*1000, base+releaseReceivedUs*1000
	}
	if judgedSentUs != 0 || judgedReceivedUs != 0 {
		rec.JudgedStartNs, rec.JudgedEndNs = base+judgedSentUs*1000, base+judgedReceivedUs*1000
	}
	rec.URL = d.urls[rec.Strategy]
	switch d.keyBy.By {
	case KeyByNone:
		rec.Key = d.intern.get(key)
	default:
		d.setKey(rec)
	}
	return nil
}
