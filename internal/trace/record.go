// Package trace keeps the commands behind a limiter's decisions, so a run can show how its
// first overshoot happened: which requests, which command got which reply from Redis, when.
//
// Recording is cheap by construction: each worker owns one Recorder, allocated once, that holds
// the decision being made, and files it in two rings of finished ones (admitted, refused) of
// fixed-size records: its own, or its lane's, which the workers one goroutine runs share
// (NewRecorders), so their decisions are filed one slot after another. A reply is kept as Redis
// sent it but as integers or a few bytes, and is formatted only when a trace is published
// (Publish), once per run. The limiter's steps report
// each command they send (limiter: read, decide, write), so what is kept is a decision's own
// calls, however the calls reach the connection.
package trace

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// Sizes of what a Recorder keeps. A decision of naive, multi or watch sends at most eight
// commands of its own (watch: a retried decision keeps its last attempt); the rings keep the
// latest decisions of one worker (of a lane's workers, so many times these), enough for a
// checker that settles a horizon late at the default load; the refused ring, once the refusal
// judges hold it (HoldUnjudged), keeps the earliest refusals they have not judged yet instead.
// A trace says how many it no longer found.
const (
	MaxSteps   = 8
	AdmitRing  = 64
	RefuseRing = 128
	textBytes  = 32
	arrayInts  = 4
)

// Phase is what a command does for the decision.
type Phase uint8

// The phases. The how-lines show the checks and the writes; the JSON shows every step.
const (
	Prune       Phase = iota + 1 // forgets old state (ZREMRANGEBYSCORE)
	Check                        // reads the count the decision is made on (ZCARD, ZCOUNT, GET, HGET)
	Write                        // takes the room (ZADD, INCR, HSET)
	Expire                       // sets the key's lifetime (PEXPIRE)
	Call                         // a script call: check and write in one, inside Redis
	HTTPRequest                  // a request to an endpoint (HTTP): decided out of sight, its reply the status
)

// ReplyKind is the RESP type of a reply.
type ReplyKind uint8

// The reply kinds.
const (
	NoReply   ReplyKind = iota // not answered (the call failed before a reply)
	Int                        // an integer
	Bulk                       // a bulk or simple string, as Text
	Nil                        // a nil reply (or Lua false)
	Ints                       // an array of integers (the first arrayInts of them kept)
	ArrayText                  // any other array, rendered into Text
	Error                      // an error reply (or a client error), its message in Text
)

// Reply is one reply as Redis sent it, in a fixed size and without pointers (the rings are
// then memory the garbage collector never scans): an integer, up to four integers of an array,
// or the first textBytes bytes of a string (Cut when longer), all in Data.
type Reply struct {
	Kind ReplyKind
	Len  uint8 // Ints: the array's length (up to 255); Bulk, ArrayText, Error: bytes kept
	Cut  bool  // the text or the array was longer than kept
	Data [textBytes]byte
}

// int is the i-th integer of an Int or Ints reply.
func (r *Reply) int(i int) int64 { return int64(binary.LittleEndian.Uint64(r.Data[8*i:])) }

// MaxInts is how many integers of an array an Ints reply keeps.
const MaxInts = arrayInts

// Int is the i-th integer of an Ints reply (i below MaxInts and Len), or an Int reply's (0).
func (r *Reply) Int(i int) int64 { return r.int(i) }

func (r *Reply) setInt(i int, n int64) { binary.LittleEndian.PutUint64(r.Data[8*i:], uint64(n)) }

// SetInt records an integer reply.
func (r *Reply) SetInt(n int64) {
	*r = Reply{Kind: Int}
	r.setInt(0, n)
}

// SetNil records a nil reply.
func (r *Reply) SetNil() { *r = Reply{Kind: Nil} }

// SetText records a string reply (Bulk) or an error's message (Error), keeping what fits.
func (r *Reply) SetText(kind ReplyKind, s string) {
	*r = Reply{Kind: kind}
	r.Len = uint8(copy(r.Data[:], s))
	r.Cut = len(s) > textBytes
}

// SetArray records an array reply: integers as integers, anything else rendered into Text.
func (r *Reply) SetArray(elems []any) {
	*r = Reply{Kind: Ints, Len: uint8(min(len(elems), 255)), Cut: len(elems) > arrayInts}
	for i, e := range elems {
		n, ok := e.(int64)
		if !ok {
			r.setArrayText(elems)
			return
		}
		if i < arrayInts {
			r.setInt(i, n)
		}
	}
}

// SetInts records an array of length integers whose first ones (up to MaxInts) are first:
// what SetArray records of such an array, for a reader that decoded it without boxing.
func (r *Reply) SetInts(length int, first []int64) {
	*r = Reply{Kind: Ints, Len: uint8(min(length, 255)), Cut: length > arrayInts}
	for i, n := range first[:min(len(first), length, arrayInts)] {
		r.setInt(i, n)
	}
}

// setArrayText renders an array with other than integers into Text, as {"1", 21}.
func (r *Reply) setArrayText(elems []any) {
	*r = Reply{Kind: ArrayText}
	w := boundedWriter{buf: r.Data[:]}
	w.writeString("{")
	for i, e := range elems {
		if i > 0 {
			w.writeString(", ")
		}
		switch x := e.(type) {
		case int64:
			w.writeInt(x)
		case string:
			w.writeString(`"`)
			w.writeString(x)
			w.writeString(`"`)
		case nil:
			w.writeString("nil")
		case []any:
			w.writeString("{…}")
		default:
			w.writeString("?")
		}
	}
	w.writeString("}")
	r.Len, r.Cut = uint8(w.n), w.cut
}

// boundedWriter writes into a fixed buffer and notes what did not fit, never allocating.
type boundedWriter struct {
	buf []byte
	n   int
	cut bool
}

func (w *boundedWriter) writeString(s string) {
	k := copy(w.buf[w.n:], s)
	w.n += k
	w.cut = w.cut || k < len(s)
}

func (w *boundedWriter) writeInt(v int64) {
	var digits [20]byte
	i := len(digits)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	for {
		i--
		digits[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		digits[i] = '-'
	}
	k := copy(w.buf[w.n:], digits[i:])
	w.n += k
	w.cut = w.cut || k < len(digits)-i
}

// Op is a command a decision sends, by a code: a record holds no pointer.
type Op uint8

// The commands the limiters' decisions send; OpOther stands for any other.
const (
	OpOther Op = iota
	OpZRemRangeByScore
	OpZCard
	OpZCount
	OpZAdd
	OpPExpire
	OpGet
	OpIncr
	OpHGet
	OpHSet
	OpWatch
	OpEvalSHA
	OpEval
	OpFCall
	// An endpoint's request by its method (HTTPRequest phase); OpHTTP for a method not named here.
	OpHTTP
	OpHTTPGet
	OpHTTPHead
	OpHTTPPost
	OpHTTPPut
	OpHTTPPatch
	OpHTTPDelete
)

var opNames = [...]string{"COMMAND", "ZREMRANGEBYSCORE", "ZCARD", "ZCOUNT", "ZADD", "PEXPIRE", "GET", "INCR", "HGET",
	"HSET", "WATCH", "EVALSHA", "EVAL", "FCALL", "HTTP", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// HTTPOp is the code of an endpoint's request by its method (upper case).
func HTTPOp(method string) Op {
	for op := OpHTTPGet; op <= OpHTTPDelete; op++ {
		if opNames[op] == method {
			return op
		}
	}
	return OpHTTP
}

// String is the command's name as Redis documents it.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return opNames[OpOther]
}

// opOf is the code of a command named as go-redis names it (lower case).
func opOf(name string) Op {
	switch name {
	case "zremrangebyscore":
		return OpZRemRangeByScore
	case "zcard":
		return OpZCard
	case "zcount":
		return OpZCount
	case "zadd":
		return OpZAdd
	case "pexpire":
		return OpPExpire
	case "get":
		return OpGet
	case "incr":
		return OpIncr
	case "hget":
		return OpHGet
	case "hset":
		return OpHSet
	case "watch":
		return OpWatch
	case "evalsha":
		return OpEvalSHA
	case "eval":
		return OpEval
	case "fcall":
		return OpFCall
	}
	return OpOther
}

// Step is one command of a decision: which, what it did, its reply, and when it was sent and
// answered, in µs since the run began on the run's monotonic clock (the evidence's clock).
// Commands in one MULTI/EXEC share the EXEC's times.
type Step struct {
	Op        Op
	Phase     Phase
	Reply     Reply
	SentUs    int64
	RepliedUs int64
}

// Record is one decision: its request id, worker and key (the engine's index), the stamp the
// evidence judged it by (epoch ms) and its acquire's [sent, replied] (µs since the run began,
// as the evidence took them), and its steps.
type Record struct {
	ID        uint64
	Seq       uint64 // the worker's count of decisions before this one (an endpoint's {seq})
	Worker    int32
	Key       int32
	StampMs   int64
	SentUs    int64
	RepliedUs int64
	LateNs    int64 // how late the evidence took the call to be (the bucket judges admits by it)
	Retries   uint16
	N         uint8 // steps kept
	Cut       bool  // more steps were sent than kept
	Steps     [MaxSteps]Step
}

// ring keeps records in a fixed array: the latest n (plain), or, held for the refusal judges
// (HoldUnjudged), those not judged yet.
type ring struct {
	recs []Record
	// sent is each record's SentUs apart: whether a held ring may drop its oldest is read
	// there, a few bytes a slot, not in the record (half a kilobyte).
	sent []int64
	next uint64 // plain: records ever kept
	// held: the records kept are recs[head:tail], oldest first (a worker's decisions are sent
	// one after another, a lane's round after round, a round's calls sent at one time). Judged
	// ones are dropped from the front, and the rest moved back to the front once as many are
	// dropped as are left (compactAfter at least): the judges keep up, so a few slots at the
	// front are used over and over and stay in the cache, where a turn around the whole ring
	// would write each record into memory the cache has long given up.
	head, tail int
}

func newRing(n int) ring { return ring{recs: make([]Record, n), sent: make([]int64, n)} }

// keep copies rec's fields and its N steps only (every reader stops at N): a script's
// decision is one step of eight, and the rest of the slot need not be written.
func (r *ring) keep(rec *Record) {
	i := int(r.next % uint64(len(r.recs)))
	copyRecord(&r.recs[i], rec)
	r.sent[i] = rec.SentUs
	r.next++
}

// keepUnjudged keeps rec in a held ring, once the records sent before judged (µs) are dropped:
// in place of none of the others, so it is dropped when they fill the ring.
func (r *ring) keepUnjudged(rec *Record, judged int64) {
	for r.head < r.tail && r.sent[r.head] < judged {
		r.head++
	}
	switch {
	case r.head == r.tail:
		r.head, r.tail = 0, 0
	case r.head >= max(r.tail-r.head, compactAfter) || r.tail == len(r.recs) && r.head > 0:
		for i := r.head; i < r.tail; i++ {
			copyRecord(&r.recs[i-r.head], &r.recs[i])
			r.sent[i-r.head] = r.sent[i]
		}
		r.head, r.tail = 0, r.tail-r.head
	case r.tail == len(r.recs):
		return // full of refusals not judged yet
	}
	copyRecord(&r.recs[r.tail], rec)
	r.sent[r.tail] = rec.SentUs
	r.tail++
}

// compactAfter is the fewest records a held ring drops before it moves the rest to the front:
// a few records copied now and then, each a handful of cache lines the ring goes on using.
const compactAfter = 4

// kept is the records the ring holds.
func (r *ring) kept(held bool) []Record {
	if held {
		return r.recs[r.head:r.tail]
	}
	return r.recs[:min(r.next, uint64(len(r.recs)))]
}

// copyRecord copies src's fields and its N steps only (every reader stops at N).
func copyRecord(dst, src *Record) {
	dst.ID, dst.Seq, dst.Worker, dst.Key, dst.StampMs = src.ID, src.Seq, src.Worker, src.Key, src.StampMs
	dst.SentUs, dst.RepliedUs, dst.LateNs = src.SentUs, src.RepliedUs, src.LateNs
	dst.Retries, dst.N, dst.Cut = src.Retries, src.N, src.Cut
	copy(dst.Steps[:src.N], src.Steps[:src.N])
}

// JudgedMark is how far the refusal judges have got: every refusal sent before it (µs since
// the run began) has been judged. One mark serves all of a strategy's recorders, moved by one
// store a pass.
type JudgedMark struct{ us atomic.Int64 }

// Set says that every refusal sent before us (µs since begin) has been judged.
func (m *JudgedMark) Set(us int64) { m.us.Store(us) }

// Recorder is one worker's recording: only that worker records into cur, and files it in its
// lane's rings; the engine reads the rings, under the lane's lock, once per run (when it
// publishes the first overshoot or false refusal).
type Recorder struct {
	begin   time.Time
	worker  int32
	off     bool
	workers uint64
	seq     uint64 // decisions begun
	lane    *lane

	cur Record // the decision being made: the worker's alone, so no lock
}

// lane is the rings one or more recorders file into, under one lock: the recorders of the
// workers one goroutine runs (a connection's, in rounds), whose decisions then go into
// consecutive slots, in the cache, where rings of their own would each have been written a
// turn after the slot's last write, in memory the cache had long given up.
type lane struct {
	mu       sync.Mutex
	admitted ring
	refused  ring
	// judged, once the refusal judges hold the refused ring (HoldUnjudged): it keeps the
	// refusals sent at or after judged's mark (not judged yet) rather than the latest.
	judged *JudgedMark
}

// NewRecorder makes the recorder of worker (of workers), with rings of its own; times are µs
// since begin. Off, it only names requests (Begin) and keeps nothing: for measuring what
// recording costs.
func NewRecorder(begin time.Time, worker, workers int, off bool) *Recorder {
	return NewRecorders(begin, []int{worker}, workers, off)[0]
}

// NewRecorders makes the recorders of workers (of all workers), whose decisions are recorded
// one after another by one goroutine: they file into one lane, whose rings are as large as
// theirs would be together.
func NewRecorders(begin time.Time, workers []int, all int, off bool) []*Recorder {
	l := &lane{}
	if !off {
		l.admitted, l.refused = newRing(AdmitRing*len(workers)), newRing(RefuseRing*len(workers))
	}
	recs := make([]*Recorder, len(workers))
	for i, w := range workers {
		recs[i] = &Recorder{begin: begin, worker: int32(w), workers: uint64(all), off: off, lane: l}
	}
	return recs
}

// Since is now in µs since the run began, on the monotonic clock. A nil Recorder records
// nothing and reads 0.
func (r *Recorder) Since() int64 {
	if r == nil {
		return 0
	}
	return int64(time.Since(r.begin) / time.Microsecond)
}

// At is t in µs since the run began, on the monotonic clock: for a time read once for many
// decisions (a pipeline's sending and its replies). A nil Recorder reads 0.
func (r *Recorder) At(t time.Time) int64 {
	if r == nil {
		return 0
	}
	return int64(t.Sub(r.begin) / time.Microsecond)
}

// Worker is the worker the recorder records.
func (r *Recorder) Worker() int { return int(r.worker) }

// Begin starts recording a decision on key (the engine's index) and returns its request id:
// unique among the workers of one strategy (the worker's count of decisions, interleaved with
// the other workers'), so no counter is shared between workers.
func (r *Recorder) Begin(key int) uint64 {
	id := r.seq*r.workers + uint64(r.worker) + 1
	r.cur.Seq = r.seq
	r.seq++
	r.cur.ID, r.cur.Worker, r.cur.Key, r.cur.N, r.cur.Cut, r.cur.Retries = id, r.worker, int32(key), 0, false, 0
	return id
}

// Retry forgets the steps of an attempt that is made again (watch, after EXEC aborted).
func (r *Recorder) Retry() {
	if r == nil {
		return
	}
	r.cur.N, r.cur.Cut = 0, false
	r.cur.Retries++
}

// Seq is the number of the decision being made among its worker's, from 0 (Begin's count):
// an endpoint's {seq}. A nil Recorder reads 0.
func (r *Recorder) Seq() uint64 {
	if r == nil {
		return 0
	}
	return r.cur.Seq
}

// Step returns the next step of the decision, the command op (named as go-redis names it), to
// fill in, or nil when none is recorded (a nil or off Recorder, or the decision's steps are full).
func (r *Recorder) Step(op string, phase Phase) *Step { return r.StepOp(opOf(op), phase) }

// StepOp is Step for a command known by its code (an endpoint's request: HTTPOp).
func (r *Recorder) StepOp(op Op, phase Phase) *Step {
	if r == nil || r.off {
		return nil
	}
	if int(r.cur.N) == MaxSteps {
		r.cur.Cut = true
		return nil
	}
	s := &r.cur.Steps[r.cur.N]
	r.cur.N++
	s.Op, s.Phase, s.Reply, s.SentUs, s.RepliedUs = op, phase, Reply{}, 0, 0
	return s
}

// Keep files the decision: admitted or refused, judged by stampMs and [sentUs, repliedUs], and
// taken to be late by late.
func (r *Recorder) Keep(admitted bool, stampMs, sentUs, repliedUs int64, late time.Duration) {
	if r == nil || r.off {
		return
	}
	r.cur.StampMs, r.cur.SentUs, r.cur.RepliedUs, r.cur.LateNs = stampMs, sentUs, repliedUs, int64(late)
	l := r.lane
	l.mu.Lock()
	switch {
	case admitted:
		l.admitted.keep(&r.cur)
	case l.judged != nil:
		l.refused.keepUnjudged(&r.cur, l.judged.us.Load())
	default:
		l.refused.keep(&r.cur)
	}
	l.mu.Unlock()
}

// HoldUnjudged makes the refused ring keep the refusals the refusal judges have not judged
// yet, as judged says how far they got: a refusal is kept in place of those they judged
// (sent before its mark), and is dropped when the others fill the ring. The first false reject
// is the earliest refusal proven wrong, judged a pass after it was answered, however many
// refusals the worker made meanwhile: the ring keeps what can still become it, not what was
// judged right already.
func (r *Recorder) HoldUnjudged(judged *JudgedMark) {
	r.lane.mu.Lock()
	r.lane.judged = judged
	r.lane.mu.Unlock()
}

// Admitted appends to out the admitted records still kept that match.
func (r *Recorder) Admitted(out []Record, match func(*Record) bool) []Record {
	return r.find(false, out, match)
}

// AdmittedOf appends to out the admitted records of recs still kept that match, reading each
// lane's ring once however many of recs file into it (a lane's ring holds its every worker's
// records, and one pass per recorder would read it once per worker).
func AdmittedOf(recs []*Recorder, out []Record, match func(*Record) bool) []Record {
	workers := make(map[int32]bool, len(recs))
	lanes := make(map[*lane]bool, len(recs))
	for _, r := range recs {
		workers[r.worker] = true
	}
	for _, r := range recs {
		if lanes[r.lane] {
			continue // read already
		}
		lanes[r.lane] = true
		l := r.lane
		l.mu.Lock()
		kept := l.admitted.kept(false)
		for i := range kept {
			if rec := &kept[i]; workers[rec.Worker] && match(rec) {
				out = append(out, *rec)
			}
		}
		l.mu.Unlock()
	}
	return out
}

// Refused appends to out the refused records still kept that match.
func (r *Recorder) Refused(out []Record, match func(*Record) bool) []Record {
	return r.find(true, out, match)
}

// find appends to out the worker's records of the lane's admitted or refused ring that match.
func (r *Recorder) find(refused bool, out []Record, match func(*Record) bool) []Record {
	l := r.lane
	l.mu.Lock()
	defer l.mu.Unlock()
	recs := l.admitted.kept(false)
	if refused {
		recs = l.refused.kept(l.judged != nil)
	}
	for i := range recs {
		if rec := &recs[i]; rec.Worker == r.worker && match(rec) {
			out = append(out, *rec)
		}
	}
	return out
}

type recorderKey struct{}

// With returns ctx carrying rec: the engine builds one such context per worker, once, and the
// limiter's steps report to From(ctx); the Limiter interface stays the same for every caller.
func With(ctx context.Context, rec *Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, rec)
}

// From is the Recorder ctx carries, or nil (which records nothing).
func From(ctx context.Context) *Recorder {
	rec, _ := ctx.Value(recorderKey{}).(*Recorder)
	return rec
}
