package bench

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
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

// RecordedCall is one finished call: the decision its evidence was told (its key, id,
// interval, stamps, outcome and release, and for an admit the time it was judged at, how late,
// over which interval), and what a record of it says beside. It is kept small: a worker copies
// one for each call.
type RecordedCall struct {
	evidence.Decision
	// Strategy is its index in Config.Strategies, Worker the worker that sent it.
	Strategy, Worker int32
	// Cut: sent as the run ended and its reply never read; not a decision (its Outcome is
	// Unknown, as for an error). FirstAttempt: the first attempt of an endpoint's request sent
	// again (retriedFirst), told only to the refusal judges.
	Cut, FirstAttempt bool
	// ReleaseSentUs is when an admit's release was about to be sent (its slot no longer held).
	ReleaseSentUs int64
	Reply         string // a script's reply to an admit, as text
	// Status is an endpoint's response status (StrategyRun.Endpoint), 0 without a response.
	Status int32
	// Failed says why the call, or its release, failed; nil for most.
	Failed *CallFailure
}

// CallFailure is why a recorded call failed (Kind, Error) or its release did (Release).
type CallFailure struct{ Kind, Error, Release string }

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
	to     CallRecorder
	runs   []*strategyState
	stop   chan struct{}
	done   chan struct{}
	batch  []RecordedCall   // the calls taken, log after log
	order  []int32          // batch's indexes in the order the calls were sent
	sorted []RecordedCall   // batch in that order
	spare  [][]RecordedCall // per log, the slice it gets back at the next take
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

// take hands every log's calls to the recorder, in the order they were sent. Each log is in
// that order already (a worker's calls follow one another), so the logs are merged, by index:
// the calls themselves move once.
func (r *recording) take() {
	r.batch, r.order = r.batch[:0], r.order[:0]
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
	for i := range r.batch {
		r.order = append(r.order, int32(i))
	}
	slices.SortFunc(r.order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(r.batch[a].SentUs, r.batch[b].SentUs), cmp.Compare(a, b))
	})
	r.sorted = r.sorted[:0]
	for _, i := range r.order {
		r.sorted = append(r.sorted, r.batch[i])
	}
	r.to.Record(r.sorted)
}

// logCall logs c, once finished, when the run is recorded: in its round's batch (rounds.go,
// logged once a round), else in its worker's log.
func (s *strategyState) logCall(c *decisionCall) {
	if s.callLogs == nil {
		return
	}
	rc := RecordedCall{Decision: c.judged, Strategy: int32(s.index), Worker: int32(c.worker), Cut: c.cut, ReleaseSentUs: c.releaseSentUs}
	if s.run.Endpoint {
		rc.Status = int32(c.d.Status)
	}
	if c.errKind != "" || c.releaseErr != "" {
		rc.Failed = &CallFailure{Kind: c.errKind, Error: c.errMsg, Release: c.releaseErr}
	}
	if c.judged.Outcome == evidence.Admitted {
		rc.Reply = c.d.ReplyText()
	}
	if c.round != nil {
		c.round.recorded = append(c.round.recorded, rc)
		return
	}
	s.callLogs[c.worker].add(rc)
}

// add appends calls to the log.
func (l *callLog) add(calls ...RecordedCall) {
	l.mu.Lock()
	l.calls = append(l.calls, calls...)
	l.mu.Unlock()
}
