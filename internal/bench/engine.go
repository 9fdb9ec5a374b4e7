package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// Crashes is a schedule of crashed clients: every Every (the first a sixth of it into the run, at
// most half a second) the next Size admits of each strategy are never released, and once more
// half a stale-after before a run of known duration ends, so what a crash leaves behind is
// still there when the run reads its keys (a set without a TTL is found leaking).
type Crashes struct {
	Every time.Duration
	Size  int64
}

// StrategyRun is one strategy the hammer drives, with its limiter already built.
type StrategyRun struct {
	Name    string
	Limiter limiter.Limiter
	// Commands and Inner are the commandstats names the strategy sends and runs inside
	// scripts (limiter.Commands), for attributing server time.
	Commands, Inner []string
	// Witness optionally replaces the in-process concurrency witness (the shared Redis one).
	Witness func(key string) *overshoot.RedisWitness
	// ServerClock: the strategy's script reads TIME, so window and bucket evidence uses each
	// admitted call's [sent, replied] interval (IntervalChecker), not the time it was given.
	ServerClock bool
	// Admits, for the window and bucket limiters, shares the admitted times with the other
	// processes of the run and judges them all together; nil judges this process's alone.
	Admits *overshoot.SharedAdmits
	// EpochAligned: the fixed window's windows start at multiples of the window, as the
	// contract says ({window_index}, {prev_window_index} or {window_start_ms}, and the shipped
	// scripts' keys); otherwise their alignment is unknown and judged as such (a window opened
	// by the first hit is not an overshoot). Only the fixed window on client time reads it.
	EpochAligned bool
	// FirstHitWindows: the contract states that a fixed window starts at the call that opened it
	// (--window-start first-hit), so its evidence anchors windows at their openers. Otherwise a
	// window of unknown alignment is judged by the model every correct one fits, and the power
	// says what anchoring would have seen (StrategySnapshot.CaughtFromFirstHit).
	FirstHitWindows bool
	// MonotoneTime: the virtual clock answers the strategy's TIME monotonically per key (each
	// call's first TIME is the greater of its stamp and the key's mark, limiter.TimeKey), so a
	// call's time is known only within [its stamp, the highest stamp sent on its key before its
	// reply was read] (overshoot/clock_evidence.go).
	MonotoneTime bool
	// TimeQuantum is how finely the script is told the time (0 or 1ms: to the millisecond or
	// finer; 1s: whole seconds): each admit is judged at its time as the script could know it.
	TimeQuantum time.Duration
	// Refusals is what the limiter may rightly do that the false-reject judges allow for.
	Refusals refusal.Rules
	// NoAbandon: the strategy's requests are all released, whatever Config.Abandon says.
	NoAbandon bool
	// AdmitAt: the limiter answers when an admitted request may go (limiter.Decision.AdmitAt,
	// a schedule): the worker waits until then (at most MaxAdmitWait) and the window and bucket
	// evidence counts the admit at that time, on whatever clock the script used. The times are
	// on each caller's clock, so the workers' must agree: the hammer runs it with Skew 0.
	AdmitAt bool
	// RefusalsUnjudged, when set, says why this strategy's refusals prove nothing (its
	// contract's RefusalsUnjudged): they are not judged, and false_rejects is null.
	RefusalsUnjudged string
	// Endpoint: the limiter is reached as its users reach it (an HTTP endpoint, --http), not
	// called on Redis. It decides on a clock the hammer does not see, between the instants it
	// measures itself (limiter.Decision.Sent, Replied), so every kind is judged over them
	// (ServerClock), the concurrency limiter by the hold it promises (Config.Hold: its promise,
	// never a pause of the worker's); it reads no worker's clock (no skew), releases its own
	// slots before it answers, abandons none, and counts its answers by status.
	Endpoint bool
	// NoKeys: the strategy's keys are not read after the load (an endpoint whose limiter's keys
	// were not named, --http-keys), so its leaks stay unknown (nil), not none.
	NoKeys bool
	// Calls, in a run whose keys other processes share (Config.SharedKeys), receives every
	// call the refusal judges would see, for judges that see every process's (hammer's
	// timeline); nil sends them nowhere.
	Calls CallSink
}

// CallSink receives one strategy's calls as the refusal judges see them (times in µs since
// begin on the run's monotonic clock): Start once before any, Add each call on its key index,
// and Mark a low-water mark: every call sent before it has been added (refusal.Forever once
// the run is over and every call has been).
type CallSink interface {
	Start(begin time.Time, spec refusal.Spec)
	Add(d evidence.Decision)
	Mark(lowWater int64)
}

// MaxAdmitWait bounds how long a worker waits for the time a schedule answered: a limiter that
// hands out slots far ahead still sees its callers come back, and its slots are judged all the
// same.
const MaxAdmitWait = 2 * time.Second

// Config describes one run. Durations and counts are validated by the caller.
type Config struct {
	RunID   string
	Target  Target
	Limiter limiter.Kind
	Limit   int64   // concurrency and windows: the limit; token bucket: the burst
	Rate    float64 // token bucket: refill per second
	Window  time.Duration
	// Strategies run at the same time, each with Workers goroutines and its own keys.
	Strategies []StrategyRun
	Workers    int
	Conns      int           // connections each strategy's workers share (0: one per worker); reported only
	Duration   time.Duration // stop after this much unpaused time (0: no time bound)
	Requests   int64         // stop after this many decisions per strategy (0: no count bound)
	// MaxDuration and MaxRequests cap a run that loads on past Duration or Requests while a
	// strategy's evidence cannot back a verdict yet (extend.go); at or below the bound, never.
	MaxDuration time.Duration
	MaxRequests int64
	// Unjudged says why a strategy's evidence so far (its power included) could back no verdict
	// but "not judged", or "" when it can: the run's rule for loading on (nil: never).
	Unjudged func(StrategySnapshot) string
	Hold     time.Duration // concurrency: how long an admitted request holds its slot; windows and bucket: a think time after each admit
	// StaleAfter is when the concurrency limiter reclaims a member as abandoned (0: never):
	// requests held further apart than that are not counted together as evidence.
	StaleAfter time.Duration
	// Abandon is the share of admitted concurrency requests never released, as a crashed
	// client's (0: none): each worker abandons that share of its admits, evenly spaced.
	Abandon float64
	// Crashes, when Every is set, abandons instead as clients crash: several requests of a
	// client at once, as a process dies holding its slots (decide.go, crashes).
	Crashes  Crashes
	OpenRate float64 // decisions per second per strategy (open loop); 0 is closed loop
	KeyFor   func(strategy string, i int) string
	KeyCount int
	// FailOpen admits when Redis errors or times out; otherwise such a decision is a reject.
	FailOpen bool
	// Profile shapes the load in time: limiter.ProfileSteady, or limiter.ProfileBursty (idle spells longer than
	// the window between bursts, so refill and expiry bugs surface). "" is steady.
	Profile string
	// BurstWindows is how many windows a burst lasts (0: two). A fixed window of unknown
	// alignment is pinned down only by several windows in a row (UnalignedChecker's power), so
	// its bursts are longer (UnalignedBurstWindows).
	BurstWindows float64
	// Skew offsets each worker's clock by a fixed amount in [-Skew, +Skew], as app servers'
	// clocks disagree: their now values reach Redis out of order.
	Skew time.Duration
	// Horizon is how late an admit may be recorded after a newer one: the call timeout.
	Horizon time.Duration
	// SharedKeys: other processes may drive the same keys (a run id given), so this process
	// cannot bound what they hold or admit, and its refusals are not judged.
	SharedKeys bool
	Tick       time.Duration // snapshot interval (100ms if zero)
	Now        func() time.Time
	// ServerStats reads INFO commandstats (summed over masters); nil when unavailable.
	ServerStats func(ctx context.Context) (map[string]redisconn.CmdStat, error)
	// Masters reads a fingerprint of the target's masters (their replication ids), so the
	// concurrency limiter's refusals are judged only while the run is on the masters it began
	// on (master_watch.go); nil when the target cannot fail over (an embedded server, unless
	// it is killed and restarted).
	Masters func(ctx context.Context) (string, error)
	// ErrorBackoff pauses a worker after a failed decision so an outage is not a busy loop.
	ErrorBackoff time.Duration
	// Leftovers reads every strategy's keys once the load has ended (keyed by strategy name):
	// what the limiter leaves behind (Leaks, LargestKey). nil reads nothing.
	Leftovers func(ctx context.Context) (map[string]Leftovers, error)
	// NoTrace records no decision's commands (no first_overshoot): only for measuring what the
	// recording costs (hack/bench-hammer.sh).
	NoTrace bool
	// Recorder, when set, receives every finished call of the run (hammer --record, record.go).
	Recorder CallRecorder
}

// Engine runs the load. Build one with New, run it once with Run.
type Engine struct {
	cfg    Config
	paused atomic.Bool
	resume chan struct{} // closed and replaced on every resume
	mu     sync.Mutex
}

// New prepares an engine.
func New(cfg Config) *Engine {
	if cfg.Tick == 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KeyCount < 1 {
		cfg.KeyCount = 1
	}
	if cfg.Horizon < time.Second {
		cfg.Horizon = time.Second
	}
	return &Engine{cfg: cfg, resume: make(chan struct{})}
}

// SetPaused stops (true) or resumes (false) sending load; workers finish their current call.
func (e *Engine) SetPaused(p bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.paused.Swap(p) && !p {
		close(e.resume)
		e.resume = make(chan struct{})
	}
}

// Paused reports whether load is paused.
func (e *Engine) Paused() bool { return e.paused.Load() }

// waitIfPaused blocks while paused; false means the context ended.
func (e *Engine) waitIfPaused(ctx context.Context) bool {
	for e.paused.Load() {
		e.mu.Lock()
		ch := e.resume
		e.mu.Unlock()
		if !e.paused.Load() {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// Run drives every strategy until the duration or request bound is reached or ctx ends. It
// sends a Snapshot every tick without ever blocking a worker (a slow reader misses ticks), sends
// a final snapshot with Done set, closes snapshots, and returns the Summary. A cancelled ctx is
// not an error: the summary says Interrupted.
func (e *Engine) Run(ctx context.Context, snapshots chan<- Snapshot) (Summary, error) {
	if snapshots != nil {
		defer close(snapshots)
	}
	cfg := e.cfg
	if len(cfg.Strategies) == 0 {
		return Summary{}, errors.New("no strategy to run")
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()

	var masters *masterWatch
	if cfg.Masters != nil && cfg.Limiter.Describe().Releases && !cfg.SharedKeys {
		masters = newMasterWatch(ctx, cfg.Masters, statsWaitTimeout)
	}
	runs := make([]*strategyState, len(cfg.Strategies))
	for i, s := range cfg.Strategies {
		runs[i] = newStrategyState(cfg, s)
		runs[i].masters = masters
	}
	// INFO runs off the tick path, each read with its own timeout: a server slow to answer it
	// delays neither the snapshots nor the stop. The baseline is bounded tighter still, since
	// the load waits for it.
	statsBefore := e.readStats(ctx, statsWaitTimeout)
	var latestStats atomic.Pointer[map[string]redisconn.CmdStat]
	pollDone := make(chan struct{})
	if cfg.ServerStats != nil && statsBefore != nil {
		go func() {
			defer close(pollDone)
			e.pollStats(loadCtx, &latestStats)
		}()
	} else {
		close(pollDone)
	}

	for _, r := range runs {
		r.groupKeys(loadCtx)
	}
	start := time.Now()
	if masters != nil {
		masters.start(loadCtx, start)
	}
	var recording *recording
	if cfg.Recorder != nil {
		recording = startRecording(cfg.Recorder, runs, start)
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		r.start(loadCtx, e, &wg, start)
	}

	ticker := time.NewTicker(cfg.Tick)
	defer ticker.Stop()
	judging := time.NewTicker(min(judgeEvery, cfg.Tick))
	defer judging.Stop()
	clock := activeClock{start: start}
	lastTick := start
	var serverUsec []*float64
	var lastStats *map[string]redisconn.CmdStat
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	extend := &extender{cfg: cfg}
	// timeUp advances the run's active clock to now and ends the load once its time is up and
	// its evidence suffices (or its cap is reached); a run bounded by decisions hands each
	// strategy at its bound another step, or stops it.
	timeUp := func(now time.Time) {
		clock.advance(now, e.paused.Load())
		if loadCtx.Err() == nil && extend.durationDone(runs, clock.active, now) {
			stopLoad()
		}
		if cfg.Requests > 0 {
			extend.requestsDone(runs)
		}
	}

loop:
	for {
		select {
		case <-done:
			break loop
		case <-ctx.Done():
			stopLoad()
			<-done
			break loop
		case <-judging.C:
			for _, r := range runs {
				r.judgePass(false)
			}
			// A pass that ran long (a limiter answering faster than the judges keep up) must
			// not keep the load going past its time: the run ends on time whatever the judging.
			timeUp(time.Now())
		case now := <-ticker.C:
			timeUp(now)
			if st := latestStats.Load(); st != nil && st != lastStats {
				serverUsec = attributeServerTime(cfg.Strategies, statsBefore, *st, runs)
				lastStats = st
			}
			snap := e.snapshot(runs, clock.active, now.Sub(lastTick), serverUsec, false)
			if extend.ext != nil {
				snap.Extending = extend.ext.Why
			}
			lastTick = now
			if snapshots != nil {
				select {
				case snapshots <- snap:
				default: // the reader is behind: drop this tick, never block
				}
			}
		}
	}
	end := time.Now()
	clock.advance(end, e.paused.Load())
	stopLoad()
	if recording != nil {
		recording.finish() // every worker has stopped: their logs hold the last calls
	}
	<-pollDone
	if masters != nil {
		masters.finish()
	}
	if statsBefore != nil {
		// The final read counts every call, but may not hold up the summary: when it is slow
		// the last background read stands.
		if st := e.readStats(context.WithoutCancel(ctx), statsWaitTimeout); st != nil {
			serverUsec = attributeServerTime(cfg.Strategies, statsBefore, st, runs)
		} else if st := latestStats.Load(); st != nil {
			serverUsec = attributeServerTime(cfg.Strategies, statsBefore, *st, runs)
		}
	}
	final := e.snapshot(runs, clock.active, end.Sub(lastTick), serverUsec, true)
	e.addLeftovers(context.WithoutCancel(ctx), final.Strategies)
	if snapshots != nil {
		select {
		case snapshots <- final:
		case <-time.After(time.Second):
		}
	}
	return Summary{
		RunID: cfg.RunID, Target: cfg.Target, Limiter: cfg.Limiter, Limit: cfg.Limit, Workers: cfg.Workers,
		Conns: cfg.Conns, Duration: clock.active, Interrupted: ctx.Err() != nil, Strategies: final.Strategies,
		Extended: extend.finish(clock.active),
	}, nil
}

// leftoversTimeout bounds the end-of-run read of the run's keys, beyond the call timeout.
const leftoversTimeout = 5 * time.Second

// addLeftovers reads what the strategies' keys hold now that the load has ended, so the final
// snapshot (the dashboard's last frame and the summary) carries it; a failed read says why.
func (e *Engine) addLeftovers(ctx context.Context, strategies []StrategySnapshot) {
	if e.cfg.Leftovers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, leftoversTimeout+e.cfg.Horizon)
	defer cancel()
	found, err := e.cfg.Leftovers(ctx)
	for i := range strategies {
		st := &strategies[i]
		if e.cfg.Strategies[i].NoKeys {
			continue
		}
		if err != nil {
			st.LeftoversUnread = "could not read the run's keys: " + trimMessage(err.Error())
			continue
		}
		l := found[st.Name]
		if l.Leaks.Samples == nil {
			l.Leaks.Samples = []KeyState{}
		}
		st.Leaks, st.LargestKey = &l.Leaks, l.Largest
	}
}

// Bounds on one INFO commandstats read: in the background, and where something waits for it.
const (
	statsTimeout     = 2 * time.Second
	statsWaitTimeout = 500 * time.Millisecond
)

// pollStats reads the server's command stats about once a second until ctx ends, publishing
// each answer; a read that times out is skipped.
func (e *Engine) pollStats(ctx context.Context, latest *atomic.Pointer[map[string]redisconn.CmdStat]) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if st := e.readStats(ctx, statsTimeout); st != nil {
				latest.Store(&st)
			}
		}
	}
}

func (e *Engine) readStats(ctx context.Context, timeout time.Duration) map[string]redisconn.CmdStat {
	if e.cfg.ServerStats == nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := e.cfg.ServerStats(sctx)
	if err != nil {
		return nil
	}
	return st
}

// activeClock measures time under load, leaving out pauses.
type activeClock struct {
	start, last time.Time
	active      time.Duration
}

func (c *activeClock) advance(now time.Time, paused bool) {
	if c.last.IsZero() {
		c.last = c.start
	}
	if now.Before(c.last) {
		return // a tick sent before the last advance: already counted
	}
	if !paused {
		c.active += now.Sub(c.last)
	}
	c.last = now
}

// snapshot builds the tick's view; final settles the evidence and marks the run done.
func (e *Engine) snapshot(runs []*strategyState, active, sinceTick time.Duration, serverUsec []*float64, final bool) Snapshot {
	cfg := e.cfg
	s := Snapshot{
		Target: cfg.Target, Limiter: cfg.Limiter, Limit: cfg.Limit, Workers: cfg.Workers,
		Elapsed: active, Total: cfg.Duration, Paused: e.paused.Load(), Done: final,
	}
	switch {
	case cfg.Duration > 0:
		s.Progress = min(1, float64(active)/float64(cfg.Duration))
	case cfg.Requests > 0:
		var least int64 = -1
		for _, r := range runs {
			if a := r.attempts.Load(); least < 0 || a < least {
				least = a
			}
		}
		s.Progress = min(1, float64(least)/float64(cfg.Requests))
	}
	if final {
		s.Progress = 1
	}
	for i, r := range runs {
		mode := fold.Live
		if final {
			mode = fold.Final
		}
		st := r.view(sinceTick, active, mode)
		if i < len(serverUsec) {
			st.ServerUsecPerCall = serverUsec[i]
		}
		s.Strategies = append(s.Strategies, st)
	}
	return s
}
