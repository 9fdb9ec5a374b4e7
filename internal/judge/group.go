package judge

import (
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/trace"
)

// group is one key group's judging: a strategy of a hammer --record file, or a key of the
// other formats. It is judged as the engine judges a strategy: evidence per limiter key, its
// counts, its latencies, its first overshoot.
type group struct {
	j     *judging
	name  string
	clock contract.Clock
	// cfg and run are the strategy's limiter and how its calls are judged, as the engine's own
	// (bench.EvidenceSpec): an endpoint's requests over their intervals on a clock the records
	// do not show, unless replay, a hammer --record file's strategy, names its own (replay.go).
	cfg    bench.Config
	run    bench.StrategyRun
	replay *replay

	keys     map[string]int
	evidence *fold.Strategy
	refusals *refusals // nil: refusals not judged (why says why)
	why      string

	st       bench.StrategySnapshot // counts as they are read
	errKinds map[string]int64
	hist     *hdrhistogram.Histogram
	from, to int64 // ns: its records placed in time
	nextID   uint64
	first    *trace.Overshoot
}

// The latency histogram's range (µs) and precision: a record's own duration, to the microsecond.
const (
	histMin     = 1
	histMax     = int64(10 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

// refusalsUnknownState is why the refusals of an HTTP load tool's records are not judged.
const refusalsUnknownState = "the limiter's state before the run is unknown"

func newGroup(j *judging, name string, recorded *history.RecordedStrategy, header *history.RunHeader) (*group, error) {
	g := &group{j: j, name: name, clock: contract.ServerClock, keys: map[string]int{}, errKinds: map[string]int64{},
		hist: hdrhistogram.New(histMin, histMax, histSigFigs), why: refusalsUnknownState}
	g.st.Name = name
	l := j.lim
	g.cfg = bench.Config{Limiter: l.kind, Limit: l.limit, Window: l.window, Rate: l.rate, StaleAfter: l.staleAfter, Hold: l.hold}
	g.run = bench.StrategyRun{Name: name, Endpoint: true, ServerClock: true, TimeQuantum: time.Millisecond,
		Refusals: hammer.HTTPRefusalRules(l.kind.Describe(), l.window)}
	if recorded != nil {
		rp, err := newReplay(g, recorded, header)
		if err != nil {
			return nil, err
		}
		g.replay = rp
		if recorded.FreshKeys {
			g.why = ""
		}
	}
	g.evidence = fold.New(l.limit, g.run.FirstHitWindows)
	if g.why == "" {
		g.refusals = newRefusals(g)
	}
	return g, nil
}

// key is the index of the limiter key's evidence, made on its first record.
func (g *group) key(name string) int {
	if i, ok := g.keys[name]; ok {
		return i
	}
	i := g.evidence.KeyCount()
	g.keys[name] = i
	g.evidence.AddKey(g.spec(i, name))
	return i
}

// spec is the evidence of key i (named key): the engine's, as its run judged it.
func (g *group) spec(i int, key string) overshoot.Spec {
	s := bench.EvidenceSpec(g.cfg, g.run, key)
	s.History, s.OnFirstOver = g.j.budget, func(m overshoot.Moment) { g.traceFirst(i, m) }
	return s
}

// outcome is what a record's limiter answered.
type outcome uint8

const (
	admitted outcome = iota
	refused
	failed  // an error, or a status neither --admitted nor --refused reads
	unknown // the record does not say (a status unknown): it may have admitted
)

// answer reads rec's answer: a hammer --record call's own decision, else its status by the
// --admitted and --refused expressions; for a failure, its kind and message.
func (g *group) answer(rec *history.Record) (outcome, string, string) {
	switch {
	case rec.Decision == history.Admit:
		return admitted, "", ""
	case rec.Decision == history.Refuse:
		return refused, "", ""
	case rec.Decision == history.Error:
		return failed, rec.ErrorKind, rec.Error
	case rec.Flags&history.StatusUnknown != 0:
		return unknown, "status unknown", "the record does not say how the request was answered"
	case rec.Status == 0:
		return failed, "no response", "no response (status 0)"
	}
	allowed, err := g.j.decide.Decide(rec.Status, g.lookup(rec))
	switch {
	case err == nil && allowed:
		return admitted, "", ""
	case err == nil:
		return refused, "", ""
	}
	kind := "status"
	if ce, ok := err.(*httptarget.CallError); ok {
		kind = string(ce.Kind)
	}
	return failed, kind, err.Error()
}

// lookup reads rec's response headers by name, for the decision expressions.
func (g *group) lookup(rec *history.Record) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i, h := range g.j.headers {
			if i < len(rec.Headers) && equalFold(h, name) && rec.Headers[i] != "" {
				return rec.Headers[i], true
			}
		}
		return "", false
	}
}

// add judges one record of the group.
func (g *group) add(rec *history.Record) {
	out, kind, msg := g.answer(rec)
	if g.replay != nil && (rec.Cut || rec.FirstAttempt) {
		g.replay.cut(rec) // sent as the run ended, or again: no decision, but it may have run
		return
	}
	bounded := rec.Flags&history.NotJudged == 0
	g.st.Attempts++
	if bounded {
		g.hist.RecordValue(max(histMin, min(histMax, (rec.EndNs-rec.StartNs)/1000))) //nolint:errcheck // clamped into range
		if g.from == 0 || rec.StartNs < g.from {
			g.from = rec.StartNs
		}
		g.to = max(g.to, rec.EndNs)
	}
	switch out {
	case admitted:
		g.st.Admitted++
	case refused:
		g.st.Rejected++
	default:
		g.st.Errors++
		g.errKinds[kind]++
		g.sampleError(msg)
	}
	if !bounded {
		if out == admitted || out == unknown {
			g.st.Unjudged++
			g.st.Unbounded++
		}
		if g.refusals != nil {
			g.refusals.stop(g.j.describe(rec) + " could not be placed in time (" + rec.Flags.String() + ")")
		}
		return
	}
	if g.replay != nil {
		g.replay.add(rec, out)
		return
	}
	i := g.key(rec.Key)
	d := g.decision(rec, i, out)
	switch out {
	case refused:
		g.j.kept.add(g.entry(i, d.ID, rec, false))
	case admitted:
		g.evidence.Key(i).Admit(d, func() { g.j.kept.add(g.entry(i, d.ID, rec, true)) })
	}
}

// decision is what the evidence is told of rec, a call on key i answered out: numbered as the
// engine numbers its requests, its interval on the records' clock, which bounds the decision
// on a clock they do not show, and for a hammer --record call what its run's evidence was told.
func (g *group) decision(rec *history.Record, i int, out outcome) evidence.Decision {
	g.nextID++
	d := evidence.Decision{ID: g.nextID, Key: int32(i), SentUs: g.j.since(rec.StartNs).Microseconds(),
		RepliedUs: ceilMicros(g.j.since(rec.EndNs)), Outcome: evidence.Unknown, LateUs: -1}
	d.ClockLoUs, d.ClockHiUs = d.SentUs, d.RepliedUs
	switch out {
	case admitted:
		d.Outcome = evidence.Admitted
	case refused:
		d.Outcome = evidence.Refused
	}
	if g.replay != nil {
		g.replay.recorded(rec, &d)
	}
	return d
}

// sampleError keeps the first distinct messages, as the engine does.
func (g *group) sampleError(msg string) {
	for i := range g.st.ErrorSamples {
		if g.st.ErrorSamples[i].Message == msg {
			g.st.ErrorSamples[i].Count++
			return
		}
	}
	if len(g.st.ErrorSamples) < bench.MaxErrorSamples {
		g.st.ErrorSamples = append(g.st.ErrorSamples, bench.ErrorSample{Message: msg, Count: 1})
	}
}

// finish settles the group's evidence and returns it as a strategy of the run.
func (g *group) finish() bench.StrategySnapshot {
	if g.replay != nil {
		g.replay.finish()
	}
	st := g.st
	st.ErrorsByKind = g.errKinds
	if st.ErrorSamples == nil {
		st.ErrorSamples = []bench.ErrorSample{}
	}
	if g.refusals != nil {
		g.refusals.finish(&st.Refusals)
	} else {
		st.RefusalsUnjudged, st.NoRefusalJudged = g.why, true
	}
	g.evidence.Fold(&st.Findings, fold.Final)
	if g.replay != nil {
		st.Allowances = bench.Allowances(g.cfg, g.run)
	} else {
		st.Allowances = "the records' intervals (each admit judged between its request's start and end)"
	}
	st.FirstOvershoot = g.first
	st.Contend(g.j.lim.limit)
	if g.to > g.from {
		st.AvgThroughput = float64(st.Attempts) / time.Duration(g.to-g.from).Seconds()
		st.Throughput = st.AvgThroughput
	}
	if g.hist.TotalCount() > 0 {
		us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
		st.Latency = bench.Latency{P50: us(g.hist.ValueAtQuantile(50)), P90: us(g.hist.ValueAtQuantile(90)),
			P99: us(g.hist.ValueAtQuantile(99)), P999: us(g.hist.ValueAtQuantile(99.9)), Max: us(g.hist.Max())}
	}
	return st
}

// entry is what the ring keeps of a judged record of key i.
func (g *group) entry(i int, id uint64, rec *history.Record, admit bool) entry {
	e := entry{g: g, key: int32(i), id: id, admitted: admit, file: int32(rec.File), line: rec.Line,
		sentUs: g.j.since(rec.StartNs).Microseconds(), repliedUs: ceilMicros(g.j.since(rec.EndNs)),
		status: int32(rec.Status), worker: int32(rec.Worker), reply: rec.Reply}
	return e
}

// ceilMicros is d in µs, rounded up: a reply is never taken for earlier than it came.
func ceilMicros(d time.Duration) int64 { return int64((d + time.Microsecond - 1) / time.Microsecond) }

// equalFold compares header names in any case (ASCII, as HTTP's).
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// statusText is an HTTP status as a published reply.
func statusText(status int32) string { return strconv.Itoa(int(status)) }
