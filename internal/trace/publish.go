package trace

import (
	"encoding/json"
	"sort"
	"strconv"
)

// Overshoot is how the first overshoot happened (SPEC section 8, first_overshoot): the moment
// the evidence first saw more than the limit and the requests behind it. For the concurrency
// limiter Held is how many requests were held at that moment and the requests are those held;
// for the windows and the bucket InWindow is how many admits the busiest window (or interval)
// held and the requests are those admits.
type Overshoot struct {
	AtMs     float64 `json:"at_ms"` // from the run's start
	Held     *int64  `json:"held,omitempty"`
	InWindow *int64  `json:"in_window,omitempty"`
	Limit    int64   `json:"limit"`
	// FromMs and ToMs bound the window or interval the admits fell in, from the run's start
	// (on the stamps' clock, or the server's interval evidence); absent for the concurrency
	// limiter, whose moment is one instant.
	FromMs *float64 `json:"from_ms,omitempty"`
	ToMs   *float64 `json:"to_ms,omitempty"`
	// Allowed, when the interval is longer than one window (the interval evidence's longer
	// spans, a bucket's), is the most a correct limiter could have admitted inside it: the
	// bound InWindow exceeded. Absent when that bound is the limit.
	Allowed  *int64    `json:"allowed,omitempty"`
	Requests []Request `json:"requests"`
	// Missing counts requests behind the moment whose records the rings no longer held (a
	// worker had moved on before the evidence settled): they are not shown, never invented.
	Missing int64 `json:"missing"`
	// Omitted counts requests found but not listed (at most MaxRequests are).
	Omitted int64 `json:"omitted"`
	// ThisProcess: the evidence counted other processes' requests too (--witness redis), and
	// only this process's are shown.
	ThisProcess bool `json:"this_process_only"`
	// DroppedHeld, for a concurrency limit, is a request whose limiter counted fewer requests
	// than were certainly held during its call (Dropped): how it let more in. Absent otherwise.
	DroppedHeld *DroppedHeld `json:"dropped_held,omitempty"`
	// Redis, for an HTTP target traced in its Redis (hammer --http-redis-trace), is what the
	// application sent on the moment's keys during its span. Absent otherwise.
	Redis *RedisCommands `json:"redis,omitempty"`
}

// InSpan says the moment was count admits certainly within [fromMs, toMs] (from the run's
// start), where a correct limiter admits at most allowed (0: the limit, one window's).
func (o *Overshoot) InSpan(count, allowed int64, fromMs, toMs float64) {
	o.InWindow, o.FromMs, o.ToMs, o.AtMs = &count, &fromMs, &toMs, toMs
	if allowed > 0 {
		o.Allowed = &allowed
	}
}

// MaxRequests bounds the requests a published trace lists.
const MaxRequests = 64

// Request is one request behind the moment: its id (r and a number unique in the strategy),
// the worker that sent it, and its steps. Raced: its check was answered before another
// request's write behind the same moment was sent, and both were admitted: neither can have
// counted the other.
type Request struct {
	ID     string `json:"id"`
	Worker int    `json:"worker"`
	// Seq, for a request to an endpoint (HTTP), is its number among its worker's ({seq}).
	Seq     *uint64   `json:"seq,omitempty"`
	Raced   bool      `json:"raced"`
	Retries int       `json:"retries,omitempty"`
	Steps   []StepOut `json:"steps"`
	Cut     bool      `json:"steps_cut,omitempty"` // more steps were sent than kept
	// File and Line name a request judge read from a load tool's records: the file and the
	// line its record starts on.
	File string `json:"file,omitempty"`
	Line int64  `json:"line,omitempty"`
}

// StepOut is a step as published: the command, its reply as JSON (a number, a string as
// Redis sent it, an array, null, or {"error": message}), its phase, and its times in µs since
// the run's start.
type StepOut struct {
	Op        string          `json:"op"`
	Phase     string          `json:"phase"`
	Reply     json.RawMessage `json:"reply"`
	SentUs    int64           `json:"sent_us"`
	RepliedUs int64           `json:"replied_us"`
}

// The phases' names in the JSON.
var phaseNames = map[Phase]string{Prune: "prune", Check: "check", Write: "write", Expire: "expire", Call: "call", HTTPRequest: "request"}

// RequestID is how a request is named: r and its id.
func RequestID(id uint64) string { return "r" + strconv.FormatUint(id, 10) }

// Requests turns records into published requests, in the order their first step was sent,
// with the raced ones marked; at most MaxRequests, the rest counted in omitted.
func Requests(recs []Record) (out []Request, omitted int64) {
	sort.Slice(recs, func(i, j int) bool { return firstSent(&recs[i]) < firstSent(&recs[j]) })
	raced := markRaced(recs)
	for i := range recs {
		if len(out) == MaxRequests {
			omitted = int64(len(recs) - i)
			break
		}
		rec := &recs[i]
		req := Request{ID: RequestID(rec.ID), Worker: int(rec.Worker), Raced: raced[i], Retries: int(rec.Retries), Cut: rec.Cut,
			Steps: make([]StepOut, rec.N)}
		for j := 0; j < int(rec.N); j++ {
			s := &rec.Steps[j]
			req.Steps[j] = StepOut{Op: s.Op.String(), Phase: phaseNames[s.Phase], Reply: s.Reply.JSON(),
				SentUs: s.SentUs, RepliedUs: s.RepliedUs}
			if s.Phase == HTTPRequest {
				seq := rec.Seq
				req.Seq = &seq
			}
		}
		out = append(out, req)
	}
	return out, omitted
}

func firstSent(r *Record) int64 {
	if r.N == 0 {
		return r.SentUs
	}
	return r.Steps[0].SentUs
}

// markRaced marks each request whose check was answered before another's write was sent: Redis
// ran that check before the other's write, so it cannot have counted it.
func markRaced(recs []Record) []bool {
	raced := make([]bool, len(recs))
	for i := range recs {
		check := recs[i].first(Check)
		if check == nil {
			continue
		}
		for j := range recs {
			if w := recs[j].first(Write); i != j && w != nil && check.RepliedUs < w.SentUs {
				raced[i] = true
				break
			}
		}
	}
	return raced
}

// first is the record's first step of phase p, or nil.
func (r *Record) first(p Phase) *Step {
	for i := 0; i < int(r.N); i++ {
		if r.Steps[i].Phase == p {
			return &r.Steps[i]
		}
	}
	return nil
}

// JSON is the reply as JSON: a number, a string, an array of numbers (or, for other arrays,
// their rendering as a string), null, or {"error": message}. A cut text ends in "…".
func (r *Reply) JSON() json.RawMessage {
	text := ""
	if r.Kind != Int && r.Kind != Ints {
		text = string(r.Data[:r.Len])
	}
	if r.Cut && r.Kind != Ints {
		text += "…"
	}
	var v any
	switch r.Kind {
	case NoReply, Nil:
		v = nil
	case Int:
		v = r.int(0)
	case Bulk, ArrayText:
		v = text
	case Ints:
		n := min(int(r.Len), arrayInts)
		ints := make([]int64, n)
		for i := range ints {
			ints[i] = r.int(i)
		}
		v = ints
		if r.Cut { // longer than kept: say so rather than show a shorter array as the reply
			w := boundedWriter{buf: make([]byte, 0, 128)[:128]}
			w.writeString("{")
			for i, x := range ints {
				if i > 0 {
					w.writeString(", ")
				}
				w.writeInt(x)
			}
			w.writeString(", …}")
			v = string(w.buf[:w.n])
		}
	case Error:
		v = map[string]string{"error": text}
	}
	b, _ := json.Marshal(v) // numbers, strings, slices and maps of them always encode
	return b
}
