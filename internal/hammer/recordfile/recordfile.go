// Package recordfile writes a hammer run's --record file: every call as its evidence saw it.
package recordfile

import (
	"cmp"
	"fmt"
	"os"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/scripts"
)

// File writes a run's calls to its --record file (history.CallWriter): the header,
// naming the limiter and how each strategy's calls were judged, then one line per call as the
// engine recorded it (a bench.CallRecorder), so that limitctl judge judges the run again by
// its rules.
type File struct {
	path   string
	f      *os.File
	w      *history.CallWriter
	header history.RunHeader
	names  []string
	keys   [][]string // each strategy's key names, by index, as met
	keyFor func(strategy string, i int) string
	err    error
	call   history.Call
}

// Open creates path and returns the recorder of cfg's run into it (Config.Recorder);
// Close it once the run is over.
func Open(path string, cfg bench.Config, targets ...httptarget.Spec) (*File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", scripts.UnwrapPathError(err))
	}
	us := func(d time.Duration) int64 { return d.Microseconds() }
	w := &File{path: path, f: f, keyFor: cfg.KeyFor, keys: make([][]string, len(cfg.Strategies))}
	w.header = history.RunHeader{RunID: cfg.RunID, Limiter: string(cfg.Limiter), Limit: cfg.Limit, WindowUs: us(cfg.Window),
		HoldUs: us(cfg.Hold), StaleAfterUs: us(cfg.StaleAfter), SkewUs: us(cfg.Skew), HorizonUs: us(cfg.Horizon)}
	for _, run := range cfg.Strategies {
		w.names = append(w.names, run.Name)
		clock := contract.ClientClock
		switch {
		case run.ServerClock:
			clock = contract.ServerClock
		case run.MonotoneTime:
			clock = contract.VirtualClock
		}
		shared := run.Witness != nil || run.Admits != nil
		w.header.Strategies = append(w.header.Strategies, history.RecordedStrategy{
			Name: run.Name, Target: history.TargetRedis, FreshKeys: !cfg.SharedKeys && run.RefusalsUnjudged == "",
			Clock: string(clock), EpochAligned: run.EpochAligned, FirstHit: run.FirstHitWindows, AdmitAt: run.AdmitAt,
			QuantumUs: us(run.TimeQuantum), StaleUnitUs: us(run.Refusals.StaleUnit), NoStaleAfter: run.Refusals.NoStaleAfter,
			NoRelease: run.Refusals.NoRelease, RefillStepUs: us(run.Refusals.RefillStep), RefusalsUnjudged: run.RefusalsUnjudged,
			Shared: shared,
		})
		if run.Endpoint {
			rs := &w.header.Strategies[len(w.header.Strategies)-1]
			rs.Target = history.TargetHTTP
			for _, t := range targets {
				if t.Name == run.Name {
					rs.URL, rs.Method = t.URL, cmp.Or(t.Method, "GET")
				}
			}
		}
	}
	return w, nil
}

// Begin writes the header, the run's clock zero in it.
func (w *File) Begin(begin time.Time) {
	w.header.StartedUnixNs = begin.UnixNano()
	for i := range w.header.Strategies {
		w.header.Strategies[i].BeginUs = begin.UnixMicro()
	}
	w.w, w.err = history.NewCallWriter(w.f, w.header)
}

// Record writes a batch of calls, one line each; the first failure is kept for Close.
func (w *File) Record(calls []bench.RecordedCall) {
	if w.err != nil {
		return
	}
	for i := range calls {
		w.fill(&calls[i])
		if w.err = w.w.Write(&w.call); w.err != nil {
			return
		}
	}
}

// fill makes w.call the line of rc.
func (w *File) fill(rc *bench.RecordedCall) {
	j := &rc.Decision
	c := &w.call
	*c = history.Call{Seq: int64(j.ID), Strategy: w.names[rc.Strategy], Worker: int(rc.Worker), Key: w.key(int(rc.Strategy), int(j.Key)),
		SentUs: j.SentUs, ReceivedUs: j.RepliedUs, Decision: "error", Reply: rc.Reply,
		ReleaseSentUs: rc.ReleaseSentUs, ReleaseReceivedUs: j.ReleasedUs, Abandoned: j.Abandoned,
		NowUs: j.NowUs, Cut: rc.Cut, FirstAttempt: rc.FirstAttempt, Status: int(rc.Status)}
	if f := rc.Failed; f != nil {
		c.ErrorKind, c.Error, c.ReleaseError = f.Kind, f.Error, f.Release
	}
	switch j.Outcome {
	case evidence.Admitted:
		c.Decision = "admit"
		c.JudgedMs, c.LateUs, c.JudgedSentUs, c.JudgedReceivedUs = j.AtMs, j.LateUs, j.SpanSentUs, j.SpanRepliedUs
	case evidence.Refused:
		c.Decision = "refuse"
	}
	if w.header.Strategies[rc.Strategy].Clock != string(contract.ServerClock) && j.ClockHiUs != j.ClockLoUs {
		c.StampHiUs = j.ClockHiUs
	}
	if c.ReleaseSentUs == 0 {
		c.ReleaseReceivedUs = 0 // never released (held to the end, or abandoned)
	}
}

// key is strategy s's key i by name.
func (w *File) key(s, i int) string {
	for len(w.keys[s]) <= i {
		w.keys[s] = append(w.keys[s], w.keyFor(w.names[s], len(w.keys[s])))
	}
	return w.keys[s][i]
}

// TraceBy names how the run's HTTP targets' application is traced in its Redis (its header's
// redis_trace); call it before the run begins.
func (w *File) TraceBy(source string) { w.header.RedisTrace = source }

// WriteTraced appends the trace's lines after the calls, once the load is over.
func (w *File) WriteTraced(lines []history.Traced) {
	for _, l := range lines {
		if w.err != nil || w.w == nil {
			return
		}
		w.err = w.w.WriteTraced(l)
	}
}

// Close writes what is buffered and closes the file: the first failure to write, if any.
func (w *File) Close() error {
	err := w.err
	if err == nil && w.w != nil {
		err = w.w.Flush()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--record %s: %w", w.path, scripts.UnwrapPathError(err))
	}
	return nil
}
