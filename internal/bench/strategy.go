package bench

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

// strategyState is one strategy's workers, counters, evidence and latency histogram.
type strategyState struct {
	cfg  Config
	run  StrategyRun
	keys []string
	// groups are the indexes of keys by the master serving them (limiter.Batch.Groups), for
	// the rounds, and byPlace the group of each key in their order, groups one after another.
	groups  [][]int
	byPlace []int

	attempts, admitted, rejected, errs, retries atomic.Int64
	failOpen, failClosed, releaseErrs           atomic.Int64
	// gate bounds the decisions of a run bounded by --requests (nil: none), raised while the
	// evidence is thin (extend.go).
	gate      *requestGate
	abandoned atomic.Int64 // admits never released (Config.Abandon)
	// abandonCredit is each worker's share of an abandon so far (abandons); only its worker,
	// or the connection whose rounds run it, touches it.
	abandonCredit []float64
	// crashLeft is how many of the next admits a crash still abandons, nextCrash when the next
	// crash comes and lastCrash when the one before the run's end does (since begin, ns; 0: none;
	// Config.Crashes).
	crashLeft, nextCrash, lastCrash atomic.Int64

	// live counts running workers; finished is when the last one stopped (since begin), so a
	// strategy that got through its --requests early is not rated over the others' time.
	live     atomic.Int32
	begin    time.Time
	finished atomic.Int64

	errMu      sync.Mutex
	errKinds   map[string]int64
	errSamples []ErrorSample // the first distinct messages, in order of first sight

	histMu sync.Mutex
	hist   *hdrhistogram.Histogram

	// evidence is each key's (the limit applies per key): its overshoot evidence, and its
	// refusal judge once they start, unless its refusals are not judged here (SharedKeys).
	evidence *fold.Strategy
	history  *overshoot.HistoryBudget // what the evidence keeps to state its power

	// recorders keep each worker's latest decisions (first_overshoot.go); beginMs is the run's
	// start on the stamps' clock; firstOver is the published first overshoot, once tracing has
	// begun to build it.
	recorders []*trace.Recorder
	beginMs   int64
	tracing   atomic.Bool
	firstOver atomic.Pointer[trace.Overshoot]
	// sentHigh holds, per key, the highest stamp (µs) sent on it so far (MonotoneTime only).
	sentHigh []atomic.Int64

	// logs are the workers' decisions for the refusal judges (nil when they are not judged);
	// inFlight holds every worker's call in flight, so a refusal is judged only once every call
	// that can have run before it has been recorded.
	logs     []refusal.Log // one per worker: recording takes no lock another worker holds
	inFlight *refusal.LowWater
	masters  *masterWatch // concurrency on a target that can fail over: judged while its masters are unchanged

	// judgedMark tells the workers' recorders which refusals are judged (trace.HoldUnjudged).
	judgedMark trace.JudgedMark

	// promised is the hold an endpoint promises (StrategyRun.Endpoint: Config.Hold, which is no
	// pause of its workers'); statuses count its answers by status code.
	promised time.Duration
	statuses *statusCounts

	// tick state, touched only by the engine's loop
	lastAttempts int64

	// callLogs are the workers' finished calls for the run's recording (record.go; nil when
	// it is not recorded), index the strategy's place in the run.
	callLogs []callLog
	index    int
}

func newStrategyState(cfg Config, run StrategyRun) *strategyState {
	s := &strategyState{cfg: cfg, run: run, errKinds: map[string]int64{}, history: overshoot.NewHistoryBudget(historyEntries),
		hist: hdrhistogram.New(histMin, histMax, histSigFigs)}
	if run.Endpoint {
		// The hold is the endpoint's promise, which the evidence holds it to; its workers do not
		// pause, have no clock it reads (no skew), and abandon nothing: it releases its own slots.
		s.promised, s.statuses = cfg.Hold, &statusCounts{}
		s.cfg.Hold, s.cfg.Skew, s.cfg.Abandon = 0, 0, 0
	}
	if run.MonotoneTime {
		s.sentHigh = make([]atomic.Int64, cfg.KeyCount)
		for i := range s.sentHigh {
			s.sentHigh[i].Store(math.MinInt64)
		}
	}
	if cfg.Requests > 0 {
		s.gate = newRequestGate(cfg.Requests, cfg.Unjudged != nil && cfg.MaxRequests > cfg.Requests)
	}
	s.abandonCredit = make([]float64, cfg.Workers)
	for w := range s.abandonCredit {
		// Each worker starts at a phase of its own (the golden ratio's multiples mod 1 spread
		// evenly), so the workers' abandons are spread over the run, not taken together.
		s.abandonCredit[w] = math.Mod(float64(w)*0.6180339887498949, 1)
	}
	first := min(cfg.Crashes.Every/6, 500*time.Millisecond)
	s.nextCrash.Store(int64(first))
	if last := cfg.Duration - cfg.StaleAfter/2; cfg.Crashes.Every > 0 && cfg.Duration > 0 && last > first {
		s.lastCrash.Store(int64(last))
	}
	s.evidence = fold.New(cfg.Limit, run.FirstHitWindows)
	for i := 0; i < cfg.KeyCount; i++ {
		s.keys = append(s.keys, cfg.KeyFor(run.Name, i))
		s.evidence.AddKey(s.evidenceSpec(i))
	}
	return s
}

// historyEntries bounds what one strategy's evidence keeps to state its power, about 16 bytes
// an entry (overshoot.HistoryBudget).
const historyEntries = 1 << 22

// evidenceSpec is the evidence of key i (s.keys[i]): EvidenceSpec's, with the run's own hooks
// (a witness or admits shared with other processes, the power's budget, the first overshoot's
// trace) and, for an endpoint, the hold it promised (s.cfg's is no pause of its workers).
func (s *strategyState) evidenceSpec(i int) overshoot.Spec {
	spec := EvidenceSpec(s.cfg, s.run, s.keys[i])
	spec.Hold, spec.Witness, spec.Shared, spec.History = s.promised, s.run.Witness, s.run.Admits, s.history
	spec.OnFirstOver = func(m overshoot.Moment) { s.traceFirst(i, m) }
	return spec
}

// groupKeys groups the keys by the master serving them for the rounds (limiter.Batch.Groups),
// before the run's clock starts: on a cluster it asks the topology, a round trip.
func (s *strategyState) groupKeys(ctx context.Context) {
	var batch *limiter.Batch // nil: one group of every key
	if s.roundConns() > 0 {
		batch = limiter.NewBatch(s.run.Limiter)
	}
	s.groups = batch.Groups(ctx, s.keys, s.cfg.Now())
	s.byPlace = s.byPlace[:0]
	for g, keys := range s.groups {
		for range keys {
			s.byPlace = append(s.byPlace, g)
		}
	}
}

// start launches the workers (and, for an open loop, the scheduler that paces them).
func (s *strategyState) start(ctx context.Context, e *Engine, wg *sync.WaitGroup, begin time.Time) {
	var schedule chan time.Time
	if s.cfg.OpenRate > 0 {
		schedule = make(chan time.Time, s.cfg.Workers*4)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(schedule)
			s.pace(ctx, e, schedule, begin)
		}()
	}
	s.begin = begin
	s.beginMs = s.cfg.Now().UnixMilli()
	// A log, a low-water slot and a lane of trace rings per worker, or per connection when its
	// workers run in rounds.
	conns := s.roundConns()
	s.recorders = make([]*trace.Recorder, s.cfg.Workers)
	for w := range s.recorders {
		if conns == 0 {
			s.recorders[w] = trace.NewRecorder(begin, w, s.cfg.Workers, s.cfg.NoTrace)
		}
	}
	for c := range conns {
		for _, rec := range trace.NewRecorders(begin, connWorkers(c, conns, s.cfg.Workers), s.cfg.Workers, s.cfg.NoTrace) {
			s.recorders[rec.Worker()] = rec
		}
	}
	loggers := s.cfg.Workers
	if conns > 0 {
		loggers = conns
	}
	s.startRefusals(begin, loggers)
	if conns > 0 {
		// Worker w runs on connection w mod conns (rounds.go).
		s.live.Store(int32(conns))
		for c := 0; c < conns; c++ {
			indexes := connWorkers(c, conns, s.cfg.Workers)
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.rounds(ctx, e, c, indexes, schedule)
				if s.live.Add(-1) == 0 {
					s.finished.Store(int64(time.Since(begin)))
				}
			}()
		}
		return
	}
	s.live.Store(int32(s.cfg.Workers))
	for w := 0; w < s.cfg.Workers; w++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			// The worker's calls run under a context the run's end does not cancel (it ends a
			// horizon later): a decision begun as the run ended is sent whole, so the naive
			// strategy's ZADD is never left without its PEXPIRE, as a round's calls are
			// (releaseContext). Its recorder rides on that context, built once: the limiter's
			// steps report to it, and no decision allocates for it.
			calls, cancel := releaseContext(ctx, s.cfg.Horizon)
			defer cancel()
			if !s.cfg.NoTrace || s.run.Endpoint {
				calls = trace.With(calls, s.recorders[worker]) // an endpoint's {worker} and {seq} too
			}
			s.work(ctx, calls, e, worker, schedule)
			if s.live.Add(-1) == 0 {
				s.finished.Store(int64(time.Since(begin)))
			}
		}(w)
	}
}

// intervalStamps reports whether the admits are judged as intervals of the stamps' clock and
// the real one: a sliding window on a monotone virtual clock (overshoot/clock_evidence.go).
func (s *strategyState) intervalStamps() bool { return TwoClocks(s.cfg, s.run) }

// TwoClocks reports whether run's admits under cfg are judged as intervals of the stamps' clock
// and the real one (intervalStamps).
func TwoClocks(cfg Config, run StrategyRun) bool {
	return run.MonotoneTime && !run.ServerClock && cfg.Limiter.Describe().Model.TwoClocks()
}
