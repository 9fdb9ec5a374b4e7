package history

import (
	"fmt"
	"net/textproto"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// Record is one request a load tool recorded: bounds on when the limiter decided it, what it
// answered, and where in which file it was written.
type Record struct {
	// StartNs is no later than the request's first byte sent, EndNs no earlier than the
	// response's first byte received: the limiter decided somewhere in [StartNs, EndNs]. Unix
	// nanoseconds on the recording host's clock (a limitctl file: its run's clock from the
	// header's started_unix_ns). Meaningless where Flags says unknown.
	StartNs, EndNs int64
	Flags          Flags
	// Status is the HTTP status; 0 when the request got no response (an error), or for a Redis
	// call of a limitctl file.
	Status int
	// Decision is what a limitctl file recorded; DecisionNone in the other formats, where the
	// judge's --admitted and --refused decide from Status and Headers.
	Decision Decision
	// Seq is the tool's request number (vegeta's per attack, limitctl's per strategy); -1 where
	// the format has none (k6).
	Seq int64
	URL string
	// Key is the limiter key the record is judged under, by Options.KeyBy.
	Key string
	// Headers holds the response headers Options.Headers names, in that order ("" where the
	// response had none of that name or the format records no headers).
	Headers []string
	// ReleaseStartNs and ReleaseEndNs bound a concurrency admit's release in a limitctl file
	// (0 when it recorded none).
	ReleaseStartNs, ReleaseEndNs int64
	// Strategy, Worker and Reply are a limitctl file's: the hammer's strategy, its worker, and
	// a Redis call's reply as text; Error and ErrorKind an error's message and kind,
	// ReleaseError a failed release's.
	Strategy     string
	Worker       int
	Reply        string
	Error        string
	ErrorKind    string
	ReleaseError string
	// Abandoned: a concurrency admit never released on purpose. Cut: sent as the run ended,
	// its reply never read (no decision). FirstAttempt: the first attempt of a request sent
	// again (Call.FirstAttempt), no decision of its own.
	Abandoned, Cut, FirstAttempt bool
	// What a limitctl file's Redis call told its evidence (Call's fields of the same names):
	// the time it was given, the virtual clock's bound on it, and for an admit the time it was
	// judged at, how late, and (JudgedStartNs, JudgedEndNs, 0 when its own) the interval.
	NowUs, StampHiUs, JudgedMs, LateUs int64
	JudgedStartNs, JudgedEndNs         int64
	// File is the index of the record's file in Reader.Files; Line the line it starts on
	// (1-based; a k6 request's http_reqs point; a limitctl file's header is line 1).
	File int
	Line int64
}

// Flags say which of a record's facts are unknown, or why it cannot be judged.
type Flags uint8

const (
	// StartUnknown: no lower bound on the decision (a vegeta zero timestamp; k6 without a
	// sending time or duration).
	StartUnknown Flags = 1 << iota
	// EndUnknown: no upper bound (no latency; k6 with no duration).
	EndUnknown
	// StatusUnknown: the record does not say how the request was answered (k6 without the
	// status tag).
	StatusUnknown
	// Backwards: the end is before the start (the wall clock stepped back mid-request).
	Backwards
	// Late: the record's start is earlier than a record already returned, beyond the reorder
	// window: it arrives out of time order and is not judged.
	Late
)

// NotJudged is the set of flags that keep a record out of the judging.
const NotJudged = StartUnknown | EndUnknown | StatusUnknown | Backwards | Late

func (f Flags) String() string {
	var parts []string
	for _, n := range []struct {
		f    Flags
		name string
	}{{StartUnknown, "start unknown"}, {EndUnknown, "end unknown"}, {StatusUnknown, "status unknown"},
		{Backwards, "end before start"}, {Late, "late"}} {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, ", ")
}

// Decision is a limitctl record's decision.
type Decision uint8

const (
	DecisionNone Decision = iota // the format records none: decide from the status
	Admit
	Refuse
	Error
)

var decisionNames = [...]string{DecisionNone: "", Admit: "admit", Refuse: "refuse", Error: "error"}

func (d Decision) String() string { return decisionNames[d] }

func parseDecision(b []byte) (Decision, bool) {
	for d, name := range decisionNames {
		if d != int(DecisionNone) && string(b) == name {
			return Decision(d), true
		}
	}
	return DecisionNone, false
}

// Format is a kind of record file.
type Format string

const (
	FormatAuto     Format = ""         // recognised from each file's first line
	FormatVegeta   Format = "vegeta"   // `vegeta encode --to json` or `--to csv`
	FormatK6       Format = "k6"       // `k6 run --out json=F`
	FormatLimitctl Format = "limitctl" // `limitctl hammer --record F`
)

// Formats are the names --format takes.
var Formats = []Format{FormatVegeta, FormatK6, FormatLimitctl}

// ParseFormat reads --format's value; "" and "auto" recognise each file's.
func ParseFormat(s string) (Format, error) {
	if s == "" || s == "auto" {
		return FormatAuto, nil
	}
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", exitcode.Usagef("--format %q: want one of vegeta, k6, limitctl (default: from the content)", s)
}

// KeyBy is how records are split into limiter keys.
type KeyBy struct {
	By     KeyByKind
	Header string // KeyByHeader: the response header's canonical name
}

// KeyByKind names a way to key records.
type KeyByKind uint8

const (
	KeyByNone   KeyByKind = iota // one key for every record (a limitctl record keeps its own key)
	KeyByURL                     // the request's URL
	KeyByHeader                  // a response header's value
)

// ParseKeyBy reads --key-by: url, header:NAME or none.
func ParseKeyBy(s string) (KeyBy, error) {
	switch {
	case s == "" || s == "none":
		return KeyBy{By: KeyByNone}, nil
	case s == "url":
		return KeyBy{By: KeyByURL}, nil
	case strings.HasPrefix(s, "header:") && len(s) > len("header:"):
		return KeyBy{By: KeyByHeader, Header: textproto.CanonicalMIMEHeaderKey(s[len("header:"):])}, nil
	}
	return KeyBy{}, exitcode.Usagef("--key-by %q: want url, header:NAME or none", s)
}

func (k KeyBy) String() string {
	switch k.By {
	case KeyByURL:
		return "url"
	case KeyByHeader:
		return "header:" + k.Header
	}
	return "none"
}

// Options say how files are read.
type Options struct {
	Format Format // FormatAuto recognises each file's from its first line
	KeyBy  KeyBy
	// Headers names the response headers each record carries in Record.Headers (what the
	// judge's --admitted and --refused expressions read).
	Headers []string
	// SkipBad counts a malformed line and reads on; without it a malformed line is an error.
	SkipBad bool
	// ReorderWindow is how far back in time a file's records may come after a later one and
	// still be returned in order: a tool writes a request when it ends, so its start comes as
	// late as its latency. Default DefaultReorderWindow.
	ReorderWindow time.Duration
	// ReorderMax bounds the records held for reordering, per file, so memory stays flat at any
	// rate: when full, the earliest is returned before its window has passed. Default
	// DefaultReorderMax.
	ReorderMax int
}

const (
	// DefaultReorderWindow is vegeta's default request timeout (30 s) and k6's (60 s): a
	// request in flight longer was cut short by the tool and ends as an error.
	DefaultReorderWindow = 60 * time.Second
	// DefaultReorderMax holds about 15 MB of records per file: the whole window up to 1,000
	// requests a second, 6 s of it at 10,000.
	DefaultReorderMax = 1 << 16
)

// Stats count what a file held.
type Stats struct {
	Lines     int64 // lines read (CSV: records)
	Records   int64 // requests returned, judged or not
	Other     int64 // lines that are not requests (k6's other metrics and definitions, a limitctl header)
	Bad       int64 // malformed lines skipped (Options.SkipBad)
	Truncated int64 // a last line cut short (no newline, not whole): 0 or 1
	// Duplicates were identical to a record already returned (a file merged twice) and
	// dropped.
	Duplicates int64
	// The records returned that cannot be judged, by the first reason in Flags' order.
	StartUnknown, EndUnknown, StatusUnknown, Backwards, Late int64
	// FirstLate is the line of the first Late record (0: none): where a file holding several
	// runs one after another (concatenated attacks) turned back in time.
	FirstLate int64
}

// NotJudged is how many returned records cannot be judged.
func (s Stats) NotJudged() int64 {
	return s.StartUnknown + s.EndUnknown + s.StatusUnknown + s.Backwards + s.Late
}

func (s *Stats) add(o Stats) {
	s.Lines += o.Lines
	s.Records += o.Records
	s.Other += o.Other
	s.Bad += o.Bad
	s.Truncated += o.Truncated
	s.Duplicates += o.Duplicates
	s.StartUnknown += o.StartUnknown
	s.EndUnknown += o.EndUnknown
	s.StatusUnknown += o.StatusUnknown
	s.Backwards += o.Backwards
	s.Late += o.Late
	if s.FirstLate == 0 {
		s.FirstLate = o.FirstLate
	}
}

func (s *Stats) count(f Flags) {
	s.Records++
	switch {
	case f&StartUnknown != 0:
		s.StartUnknown++
	case f&EndUnknown != 0:
		s.EndUnknown++
	case f&StatusUnknown != 0:
		s.StatusUnknown++
	case f&Backwards != 0:
		s.Backwards++
	case f&Late != 0:
		s.Late++
	}
}

// lineError is a malformed line: exit 2, naming the file and the line.
func lineError(file string, line int64, format string, err error) error {
	return exitcode.Usagef("%s line %d: not a %s record: %v", file, line, format, err)
}

func describe(f Format, csv bool) string {
	switch {
	case f == FormatVegeta && csv:
		return "vegeta CSV"
	case f == FormatVegeta:
		return "vegeta JSON"
	}
	return fmt.Sprint(f)
}
