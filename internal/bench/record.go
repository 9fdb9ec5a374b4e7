package bench

import (
	"slices"
	"sync"
	"time"

	"github.com/limitctl/limitctl/internal/bench/refusal"
)

// A run can be recorded (hammer --record): every finished call as its evidence saw it, so that
// judge can judge the run again offline by the same rules, or against another limit. Recording
// stays off the workers' path: a worker appends its call to a log of its own (a lock no other
// worker takes), and one goroutine takes the logs every recordEvery, puts each batch in the
// order its calls were sent, and hands it to the recorder, which writes it.

// CallRecorder receives a run's finished calls: Begin once with the run's clock zero (every
// call's times count from it), then batches in about the order they were sent. A batch's slice
// is reused once Record returns.
type CallRecorder interface {
	Begin(begin time.Time)
	Record(calls []RecordedCall)
}

// RecordedCall is one finished call: what the refusal judges were told of it (Judged: its
// interval, stamps, outcome and release), and for an admit what its overshoot evidence was
// told (the time it was judged at, how late, over which interval).
type RecordedCall struct {
	Strategy int    // its index in Config.Strategies
	Worker   int    // the worker that sent it
	Key      int    // its key's index (Config.KeyFor)
	ID       uint64 // the request's id, unique in its strategy
	Judged   refusal.Call
	// Cut: sent as the run ended and its reply never read; not a decision (Judged.Outcome is
	// Unknown, as for an error).
	Cut bool
	// NowUs is the time the limiter was given (the worker's clock, its skew included).
	NowUs int64
	// An admit's evidence: judged at JudgedMs (epoch ms) at most LateUs late, over
	// [JudgedSentUs, JudgedRepliedUs] when that differs from its call's (both 0 otherwise).
	JudgedMs, LateUs              int64
	JudgedSentUs, JudgedRepliedUs int64
	// ReleaseSentUs is when an admit's release was about to be sent (its slot no longer held).
	ReleaseSentUs int64
	Status        int    // an endpoint's response status
	Reply         string // a script's reply, as text
	// ErrorKind and Error say why a decision failed, ReleaseError why its release did.
	ErrorKind, Error, ReleaseError string
}

// recordEvery is how often the recording goroutine takes the workers' logs.
const recordEvery = 20 * time.Millisecond

// callLog is one worker's finished calls not yet taken, on a cache line apart from the others'.
type callLog struct {
	mu    sync.Mutex
	calls []RecordedCall
	_     [32]byte
}

// recording is a run's recording: its strategies' logs and the goroutine that drains them.
type recording struct {
	to    CallRecorder
	runs  []*strategyState
	stop  chan struct{}
	done  chan struct{}
	batch []RecordedCall
	spare [][]RecordedCall // per log, the slice it gets back at the next take
}

// startRecording gives every strategy its logs and starts draining them to to, from begin.
func startRecording(to CallRecorder, runs []*strategyState, begin time.Time) *recording {
	r := &recording{to: to, runs: runs, stop: make(chan struct{}), done: make(chan struct{})}
	to.Begin(begin)
	for i, s := range runs {
		s.callLogs, s.index = make([]callLog, s.cfg.Workers), i
		r.spare = append(r.spare, make([][]RecordedCall, s.cfg.Workers)...)
	}
	go func() {
		defer close(r.done)
		t := time.NewTicker(recordEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				r.take()
			case <-r.stop:
				r.take()
				return
			}
		}
	}()
	return r
}

// finish takes what the logs hold once every worker has stopped, and ends the goroutine.
func (r *recording) finish() {
	close(r.stop)
	<-r.done
}

// take hands every log's calls to the recorder, in the order they were sent.
func (r *recording) take() {
	r.batch = r.batch[:0]
	n := 0
	for _, s := range r.runs {
		for w := range s.callLogs {
			l := &s.callLogs[w]
			l.mu.Lock()
			taken := l.calls
			l.calls = r.spare[n][:0]
			l.mu.Unlock()
			r.batch = append(r.batch, taken...)
			r.spare[n] = taken
			n++
		}
	}
	if len(r.batch) == 0 {
		return
	}
	slices.SortFunc(r.batch, func(a, b RecordedCall) int {
		switch {
		case a.Judged.Sent < b.Judged.Sent:
			return -1
		case a.Judged.Sent > b.Judged.Sent:
			return 1
		}
		return 0
	})
	r.to.Record(r.batch)
}

// logCall logs c, once finished, when the run is recorded.
func (s *strategyState) logCall(c *decisionCall) {
	if s.callLogs == nil {
		return
	}
	rc := RecordedCall{Strategy: s.index, Worker: c.worker, Key: c.keyIndex, ID: c.id, Judged: c.judged, Cut: c.cut,
		NowUs: c.now.UnixMicro(), JudgedMs: c.judgedMs, LateUs: c.late.Microseconds(), ReleaseSentUs: c.releaseSentUs,
		ErrorKind: c.errKind, Error: c.errMsg, ReleaseError: c.releaseErr}
	if c.judged.Outcome == refusal.Admitted {
		if sent, replied := c.judgedSent.Microseconds(), ceilMicros(c.judgedReplied); sent != c.judged.Sent || replied != c.judged.Replied {
			rc.JudgedSentUs, rc.JudgedRepliedUs = sent, replied
		}
		rc.Reply = c.d.ReplyText()
	}
	l := &s.callLogs[c.worker]
	l.mu.Lock()
	l.calls = append(l.calls, rc)
	l.mu.Unlock()
}
