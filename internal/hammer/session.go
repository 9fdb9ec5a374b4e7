package hammer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/hammer/inject"
	"github.com/limitctl/limitctl/internal/history"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/hammer/recordfile"
	"github.com/limitctl/limitctl/internal/hammer/runkeys"
	"github.com/limitctl/limitctl/internal/hammer/timeline"
	"github.com/limitctl/limitctl/internal/httptarget"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redisconn"
	"github.com/limitctl/limitctl/internal/redistrace"
)

// Result is what a finished session found.
type Result struct {
	Options Options // what ran
	Summary bench.Summary
	Judgement
	Interrupted bool // a signal or the watcher stopped the load early
	// KeysKept names where the run's keys stayed (--keep-keys); empty when they were deleted.
	KeysKept string
	// KeysDeleted counts the keys the clean-up deleted; KeysNotDeleted those whose UNLINK
	// failed, and CleanupWarnings say why (also sent to Notice).
	KeysDeleted     int64
	KeysNotDeleted  int64
	CleanupWarnings []string
	// WatchErr is the watcher's own failure (the dashboard), if any.
	WatchErr error
	// Recorded is what judge read, when the calls were judged from records; nil for a run.
	Recorded *history.Recorded
	// RedisTrace is, per HTTP target traced in its Redis (--http-redis-trace), what its
	// application's commands show; nil without a trace.
	RedisTrace map[string]*redistrace.Summary
}

// Err is the run's verdict as an error with its exit code, to return once the result has been
// printed: the watcher's failure, an interrupt (130), a failed assertion (3), or nil.
func (r Result) Err() error {
	if r.WatchErr != nil && !errors.Is(r.WatchErr, context.Canceled) {
		return fmt.Errorf("dashboard: %w", r.WatchErr)
	}
	if r.Interrupted && r.Recorded != nil {
		return &exitcode.InterruptedError{What: "judge stopped; what it read is judged above"}
	}
	if r.Interrupted {
		return &exitcode.InterruptedError{What: fmt.Sprintf("hammer stopped after %s; partial summary above", human.Elapsed(r.Summary.Duration))}
	}
	if len(r.Failures) > 0 {
		return exitcode.CheckFailedf("%s", failureMessage(r.Failures))
	}
	return nil
}

// ClockOf is whose clock a strategy's script runs on: the custom script's contract says; the
// shipped scripts take the hammer's time in ARGV.
func ClockOf(o Options, st limiter.Strategy) contract.Clock {
	if st == limiter.Custom && o.Contract != nil {
		return o.Contract.Clock
	}
	return contract.ClientClock
}

// TimeAnswered reports whether the hammer answers the strategy's TIME itself (the virtual clock).
func TimeAnswered(o Options, st limiter.Strategy) bool { return ClockOf(o, st).AnswersTime() }

// ClockNotes are the summary's lines about clocks: one per strategy whose TIME the hammer
// answered, so a verdict on a script that reads TIME says which clock it was judged on.
func ClockNotes(o Options) []string {
	var notes []string
	for _, st := range o.Strategies {
		if TimeAnswered(o, st) {
			notes = append(notes, fmt.Sprintf("%s: clock virtual: the hammer answered the script's TIME with each call's own time (the run's clock plus the worker's skew), never going back per key; --clock server runs it on the server's", st))
		}
	}
	return notes
}

// burstWindows is how long the bursty load's bursts last: longer for a custom fixed window judged
// with its alignment unknown (bench.UnalignedBurstWindows), the default otherwise (0).
func burstWindows(o Options) float64 {
	c := o.Contract
	if c == nil || !o.Limiter.Describe().Model.Alignable() || c.Clock == contract.ServerClock ||
		c.Spec.WindowStart != contract.AnyStart || c.AdmitAt != nil {
		return 0
	}
	return bench.UnalignedBurstWindows
}

// epochAligned is the fixed window's alignment as the strategy's contract implies it: the
// shipped scripts name a window by its start, a custom script's contract says.
func epochAligned(o Options, st limiter.Strategy) bool {
	if st == limiter.Custom && o.Contract != nil {
		return o.Contract.EpochAligned()
	}
	return true
}

// timeQuantum is how finely the strategy's script is told the time. A concurrency script has no
// window of its own: a window's index it is given is a clock that ticks once a window, and the
// witness and the refusal judge allow for that rounding of the times it scores requests by. A kind
// that weighs by the fraction of its window (Description.WeighsFraction) allows the coarsest now
// the script may take that fraction from.
func timeQuantum(o Options, st limiter.Strategy) time.Duration {
	switch {
	case st != limiter.Custom || o.Contract == nil:
		return time.Millisecond
	case o.Limiter.Describe().Releases:
		return o.Contract.NowQuantum(o.Window)
	case o.Limiter.Describe().WeighsFraction:
		return o.Contract.FractionQuantum()
	}
	return o.Contract.TimeQuantum()
}

// session is one run's state between the steps of Run.
type session struct {
	opts       Options
	deps       Deps
	rdb        redis.UniversalClient
	spawned    *embedded.Server
	target     bench.Target
	keys       runkeys.Scheme
	cfg        bench.Config
	witnessKey func(string) string  // nil without the Redis witness
	closers    []func()             // the strategies' own clients (--conns)
	peers      *participation       // this process's entry in a run shared by id; nil once left
	custom     limiter.Limiter      // the user's script, for its single hit (hitOnce); nil without one
	onceKey    string               // the single hit's key: one per process in a run shared by id
	process    string               // this process's name among a shared run's
	timeline   *timeline.Publisher  // publishes this process's calls for hammer report; nil when not shared
	targets    []*httptarget.Target // the HTTP targets (--http), in the order of their strategies
	tracer     *redistrace.Tracer   // the HTTP targets' application traced in its Redis; nil without
	traceErr   error                // why the trace may lack its last commands
	// interrupted is the context a signal cancels (not the dashboard's stop): once it has
	// ended, nothing more is sent but the clean-up.
	interrupted context.Context
}

// hitOnce sends the user's script one decision on a key of its own once the load has ended,
// released when admitted, before the run's keys are read: under load every key is hit many
// times, and a script that sets its TTL only on a later hit (EXPIRE when the count reaches 2,
// or only on some branch) leaks exactly the keys hit once, as a user seen once a day is. Its
// failure is no evidence of anything and is not reported.
func (s *session) hitOnce(ctx context.Context) {
	if s.custom == nil {
		return
	}
	key := s.onceKey
	if s.setupKeys(ctx, []string{key}) != nil {
		return // the load's keys were set up alike: a failure now is the server's, not the script's
	}
	d, err := s.custom.Acquire(ctx, key, s.deps.Now())
	if err == nil && d.Allowed && s.opts.Limiter.Describe().Releases {
		s.custom.Release(ctx, key, d) //nolint:errcheck // a release the limiter refuses leaves a key the read then finds
	}
}

// Run is one hammer session: lint a custom script, open or start the target, build the
// strategies, check before any load that the run can do everything it must, drive the load
// with the injected faults, delete the run's keys and judge the assertions. An error means no
// summary; a summary with an interrupt or a failed assertion comes back as a Result whose Err
// says so.
func Run(ctx context.Context, o Options, deps Deps) (Result, error) {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	deps.Now = shiftedNow(deps.Now, o.Timeline.Shift)
	s := &session{opts: o, deps: deps, process: processName()}
	if o.RunID != "" && !ValidRunID(o.RunID) {
		return Result{}, exitcode.Usagef("run id %q: want 1-64 letters, digits, '-' or '_'", o.RunID)
	}
	if o.Prefix == "" || strings.ContainsAny(o.Prefix, "{}*?[]\\ \t\n") {
		return Result{}, exitcode.Usagef("key prefix %q: want a non-empty prefix without braces, glob characters or spaces", o.Prefix)
	}
	if o.ScriptSource != "" {
		if err := lintScript(o, deps.notice); err != nil {
			return Result{}, err
		}
		if o.Contract != nil {
			deps.notice(describeContract(o))
		}
	}
	runID := o.RunID
	if runID == "" {
		runID = NewRunID()
	}
	s.keys = runkeys.Scheme{Prefix: o.Prefix, RunID: runID, Limiter: o.Limiter, Keys: o.Keys}
	for _, st := range o.Strategies {
		s.keys.Strategies = append(s.keys.Strategies, string(st))
	}
	for _, h := range o.HTTP {
		s.keys.Targets = append(s.keys.Targets, h.Name)
	}
	if o.Demo {
		stopDemo, err := s.startDemo(ctx)
		defer stopDemo()
		if err != nil {
			return Result{}, err
		}
		o = s.opts // the targets at the application's address
	}
	if err := preflightHTTP(ctx, o, deps.Timeout); err != nil {
		return Result{}, err // before anything starts: a Redis started for nothing would say so first
	}
	closeTarget, err := s.openTarget(ctx)
	defer closeTarget()
	defer s.closeClients()
	if err != nil {
		return Result{}, err
	}
	if err := s.startTrace(ctx); err != nil {
		return Result{}, err // before anything is said of the run: bad input is its one line
	}
	defer s.stopTrace()
	s.timeline = s.newTimeline()
	if err := s.build(runID); err != nil {
		return Result{}, err
	}
	for _, t := range s.targets {
		s.deps.notice(fmt.Sprintf("target: %s %s %s", t.Name(), t.Method(), t.URL()))
	}
	if len(o.Strategies) > 0 {
		if err := preflight(ctx, s.rdb, o); err != nil {
			return Result{}, err
		}
	}
	if o.RunID != "" {
		// A given id may be shared: register, so no other process deletes the keys under us.
		peers, err := join(ctx, s.rdb, s.keys.Participants(), s.deps.Timeout, time.Now)
		if errors.Is(err, errRunClosing) {
			return Result{}, fmt.Errorf("run id %s %v", o.RunID, err)
		} else if refused(err, true) {
			return Result{}, fmt.Errorf("--run-id cannot register this process with others sharing the id: %s", human.FirstLine(err.Error()))
		} else if err != nil {
			return Result{}, fmt.Errorf("--run-id: could not register this process with others sharing the id: %s", human.FirstLine(err.Error()))
		}
		s.peers = peers
		defer s.leave() // after a failed probe with --keep-keys; otherwise already left
	}
	if err := s.probe(ctx); err != nil {
		return Result{}, err
	}
	s.startTimeline(ctx)
	defer s.leaveServersTheirCores(ctx)()
	if o.Record == "" {
		s.cfg.Recorder = s.traced(nil)
		return s.load(ctx)
	}
	var specs []httptarget.Spec
	for _, h := range o.HTTP {
		specs = append(specs, h.Spec)
	}
	rec, err := recordfile.Open(o.Record, s.cfg, specs...)
	if err != nil {
		return Result{}, err
	}
	if s.tracer != nil {
		rec.TraceBy(s.tracer.Source())
	}
	s.cfg.Recorder = s.traced(rec)
	res, err := s.load(ctx)
	s.recordTrace(rec, res)
	if rerr := rec.Close(); err == nil && rerr != nil {
		return res, rerr
	}
	return res, err
}

// openTarget connects to the user's server, or starts a throw-away one; the returned func
// stops what was started.
func (s *session) openTarget(ctx context.Context) (func(), error) {
	poolSize := s.opts.Workers*len(s.opts.Strategies) + 16
	if s.opts.Conns > 0 {
		poolSize = 16 // the workers have their strategies' own clients
	}
	switch {
	case s.rdb != nil:
		return func() {}, nil // opened already: the demonstration's
	case !s.opts.needsRedis():
		return func() {}, nil // HTTP targets alone: no Redis at all
	case len(s.opts.Strategies) == 0 && s.deps.Connect == nil:
		return func() {}, exitcode.Usagef("--http-keys reads the limiter's own keys: give its Redis with --url or --addr")
	}
	if s.deps.Connect != nil {
		rdb, target, err := s.deps.Connect(ctx, poolSize)
		if err != nil {
			return func() {}, err
		}
		s.rdb, s.target = rdb, target
		switch {
		case len(s.opts.Strategies) == 0 && s.opts.RedisTrace:
			// The trace says which Redis it reads, once it reads it.
		case len(s.opts.Strategies) == 0:
			s.deps.notice(fmt.Sprintf("limiter keys: %s %s (--http-keys)", target.Kind, target.Addr))
		default:
			s.deps.notice(fmt.Sprintf("target: %s %s", target.Kind, target.Addr))
		}
		return func() {}, nil
	}
	spawned, err := embedded.Start(s.opts.Embedded)
	if err != nil {
		return func() {}, err
	}
	conn := redisconn.Options{Addrs: []string{spawned.Addr}, Timeout: s.deps.Timeout, PoolSize: poolSize, NoCheckoutProbe: true}
	rdb, _, err := redisconn.Open(ctx, conn, func(string) string { return "" })
	if err != nil {
		spawned.Stop()
		return func() {}, err
	}
	s.rdb, s.spawned, s.target = rdb, spawned, bench.Target{Kind: spawned.Kind, Addr: spawned.Addr}
	if spawned.Kind == embedded.KindMemory {
		s.deps.notice(fmt.Sprintf("target: in-process server (miniredis) on %s; its throughput is not representative of Redis", spawned.Addr))
	} else {
		s.deps.notice(fmt.Sprintf("target: throw-away redis-server %s on %s", serverVersion(ctx, rdb), spawned.Addr))
	}
	return func() { rdb.Close(); spawned.Stop() }, nil
}

// build assembles the engine's configuration and one limiter per strategy.
func (s *session) build(runID string) error {
	o := s.opts
	s.cfg = bench.Config{
		RunID: runID, Target: s.target, Limiter: o.Limiter, Limit: o.Limit, Window: o.Window,
		Rate: float64(o.Limit) / o.Window.Seconds(), Workers: o.Workers, Conns: o.Conns, Duration: o.Duration,
		Requests: o.Requests, MaxDuration: o.MaxDuration, MaxRequests: o.MaxRequests, Hold: o.Hold, StaleAfter: o.StaleAfter, Abandon: o.Abandon, OpenRate: o.OpenRate, KeyCount: o.Keys,
		FailOpen: o.FailOpen, Horizon: s.deps.Timeout, Now: s.deps.Now, Tick: o.Tick, SharedKeys: o.RunID != "",
		ErrorBackoff: 10 * time.Millisecond, Profile: o.Profile, Skew: o.Skew, NoTrace: o.NoTrace,
	}
	if len(o.Strategies) > 0 {
		s.cfg.ServerStats = func(ctx context.Context) (map[string]redisconn.CmdStat, error) {
			return redisconn.CommandStats(ctx, s.rdb)
		}
	}
	s.cfg.Crashes, s.cfg.BurstWindows = o.crashes(), burstWindows(o)
	// Every run loads on while its own verdict could only be "not judged", a process of a run
	// shared by id too: its calls join the shared timeline, so loading on thickens that as well.
	s.cfg.Unjudged = func(st bench.StrategySnapshot) string { return verdict.LoadOnFor(st, o.Limiter, o.Limit) }
	s.cfg.KeyFor = func(strategy string, i int) string {
		if s.opts.httpTarget(strategy) != nil {
			return s.keys.IdentityOf(strategy, i) // an endpoint's {key}: a client identity
		}
		return s.keys.Key(strategy, i)
	}
	leakTTL := bench.LeakTTL(max(o.Window, o.StaleAfter))
	s.cfg.Leftovers = func(ctx context.Context) (map[string]bench.Leftovers, error) {
		if s.interrupted != nil && s.interrupted.Err() != nil {
			// Ctrl-C: clean up and stop, rather than send one more decision and read every key.
			return nil, errors.New("the run was interrupted")
		}
		s.stopTrace() // the load has ended: what follows is the run's own reading
		found := map[string]bench.Leftovers{}
		if len(o.Strategies) > 0 {
			s.hitOnce(ctx)
			var err error
			if found, err = s.keys.Leftovers(ctx, s.rdb, leakTTL); err != nil {
				return nil, err
			}
		}
		if app := s.appKeys(); len(app.Patterns) > 0 {
			theirs, err := app.Leftovers(ctx, s.rdb, leakTTL)
			if err != nil {
				return nil, err
			}
			maps.Copy(found, theirs)
		}
		return found, nil
	}
	if len(o.Strategies) > 0 && (s.deps.Connect != nil || inject.Restarts(o.Injects)) {
		// A server of the user's may fail over, and a restarted one comes back from nothing or a
		// snapshot: either may lose a release it acknowledged.
		s.cfg.Masters = func(ctx context.Context) (string, error) { return bench.MasterFingerprint(ctx, s.rdb) }
	}
	lcfg := limiter.Config{
		Limit: o.Limit, Window: o.Window, StaleAfter: o.StaleAfter,
		Rate: s.cfg.Rate, Burst: o.Limit, CustomSource: o.ScriptSource, Contract: o.Contract,
		// Processes sharing a run id have clocks of their own: a mark shared among them would
		// answer one process's TIME from another's clock, beyond what its evidence knows.
		NoTimeMark: o.RunID != "",
	}
	if !o.NoDirect {
		// A single node: the script strategies' calls go out on connections of their own
		// (package wire), the hot path; a cluster or a master through Sentinels: through
		// rueidis (redisconn.Shared).
		lcfg.Direct, _ = redisconn.DirectOptions(s.rdb)
	}
	// A limiter whose requests hold their slots is judged by a witness of what is held, one the
	// processes share; the others by every process's admits together.
	held := o.Limiter.Describe().Releases
	if o.RedisWitness && held {
		s.witnessKey = s.keys.Witness
	}
	for _, st := range o.Strategies {
		rdb := s.strategyClient(st)
		scfg := lcfg
		if !o.NoDirect && lcfg.Direct == nil && st.RunsScript() {
			// A cluster or Sentinels: the script calls' fast path is a rueidis client of the
			// strategy's own.
			shared, timeout, err := redisconn.Shared(s.rdb)
			if err != nil {
				return fmt.Errorf("%s: %w", st, err)
			}
			if shared != nil {
				s.closers = append(s.closers, shared.Close)
				scfg.Shared, scfg.SharedTimeout = shared, timeout
				// A cluster: each round written to its master on a connection of its own,
				// rueidis taking what no master's connection can (limiter.Config.Nodes).
				scfg.Nodes, _ = redisconn.NodeOptions(s.rdb)
			}
		}
		lim, err := limiter.New(o.Limiter, st, rdb, scfg)
		if err != nil {
			return exitcode.Usagef("%v", err)
		}
		if st == limiter.Custom {
			s.custom, s.onceKey = lim, s.keys.Once(string(st))
			if o.RunID != "" {
				// Other processes hit their own: a key hit once per process is hit once.
				s.onceKey += ":" + NewRunID()
			}
		}
		cmds, inner := limiter.Commands(o.Limiter, st)
		run := bench.StrategyRun{Name: string(st), Limiter: lim, Commands: cmds, Inner: inner,
			ServerClock: ClockOf(o, st) == contract.ServerClock, EpochAligned: epochAligned(o, st), TimeQuantum: timeQuantum(o, st),
			MonotoneTime: TimeAnswered(o, st) && !lcfg.NoTimeMark,
			Refusals:     RefusalRules(o, st)}
		// A script told no stale time (a plain semaphore) is not expected to reclaim: an
		// abandoned request would only take a slot from its pool for good, hiding a slot too
		// many, and no refusal could be blamed on it. It abandons only when asked.
		run.NoAbandon = run.Refusals.NoStaleAfter && !o.AbandonGiven
		if st == limiter.Custom && o.Contract != nil {
			run.FirstHitWindows = o.Contract.FirstHitWindows()
			run.AdmitAt = o.Contract.AdmitAt != nil
			run.RefusalsUnjudged = o.Contract.Spec.RefusalsUnjudged()
		}
		if s.timeline != nil && run.RefusalsUnjudged == "" {
			run.Calls = s.timeline.Sink(run.Name)
		}
		if o.RedisWitness && !held {
			// Window and bucket limiters: judged over every process's admits together.
			run.Admits = overshoot.NewSharedAdmits(s.rdb, overshoot.SharedConfig{Window: o.Window,
				Horizon: s.deps.Timeout, Now: s.deps.Now, ChunkKey: s.keys.AdmitChunk})
			s.closers = append(s.closers, run.Admits.Close)
		}
		if s.witnessKey != nil {
			stale := overshoot.WitnessStale(o.StaleAfter, run.TimeQuantum, run.Refusals.StaleUnit)
			run.Witness = func(key string) *overshoot.RedisWitness {
				return overshoot.NewRedisWitness(rdb, s.witnessKey(key), o.Limit, stale, s.deps.Timeout)
			}
		}
		s.cfg.Strategies = append(s.cfg.Strategies, run)
	}
	if err := s.buildHTTP(runID); err != nil {
		return err
	}
	if len(o.Strategies) == 0 {
		s.target = s.httpTargetOf()
		s.cfg.Target = s.target
	}
	return nil
}

// strategyClient is the client a strategy's workers share. With Conns, each strategy gets Conns
// connections of its own: a script strategy's engine runs its workers' calls in rounds over
// them, and naive's single commands are pipelined over them automatically; watch and multi
// keep a connection per transaction (WATCH state and MULTI/EXEC blocks cannot interleave with
// other workers' commands), so their workers share Conns connections without pipelining.
func (s *session) strategyClient(st limiter.Strategy) redis.UniversalClient {
	if s.opts.Conns == 0 {
		return s.rdb
	}
	base := redisconn.Twin(s.rdb, s.opts.Conns)
	if st.RunsScript() || st == limiter.Watch || st == limiter.Multi {
		// A script strategy's decisions go out in the engine's rounds (bench.rounds), one
		// pipeline per connection of base.
		s.closers = append(s.closers, func() { base.Close() })
		return base
	}
	front, stop := redisconn.Pipeline(base, s.opts.Conns)
	s.closers = append(s.closers, func() { stop(); base.Close() })
	return front
}

func (s *session) closeClients() {
	for _, c := range s.closers {
		c()
	}
}

// load drives the engine with the watcher and the injected faults alongside, cleans up and
// judges.
func (s *session) load(ctx context.Context) (Result, error) {
	s.interrupted = ctx
	engine := bench.New(s.cfg)
	snapshots := make(chan bench.Snapshot, 4)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var stopped atomic.Bool // the user ended the run early (Live.Stop): not an interruption
	stop := func() { stopped.Store(true); stopRun() }
	watchDone := make(chan error, 1)
	go func() {
		if s.deps.Watch == nil {
			for range snapshots {
			}
			watchDone <- nil
			return
		}
		err := s.deps.Watch(runCtx, Live{Target: s.target, Engine: engine, Stop: stop, Quit: stopRun, Trace: s.traceView()}, snapshots)
		for range snapshots { // a watcher that quit early must not leave the engine's last send waiting
		}
		watchDone <- err
	}()
	stopInjects := inject.Start(runCtx, s.opts.Injects, s.rdb, s.spawned, s.deps.notice)
	summary, runErr := engine.Run(runCtx, snapshots)
	if stopped.Load() && ctx.Err() == nil {
		summary.Interrupted = false
	}
	stopInjects()
	watchErr := <-watchDone

	res := Result{Options: s.opts, Summary: summary, WatchErr: watchErr}
	s.finishTrace(&res)
	if s.timeline != nil {
		s.timeline.Finish() // every call published before the summary that names this process
	}
	if runErr == nil && s.opts.RunID != "" && s.opts.RedisWitness {
		// Other processes may share this run: leave the summary for `hammer report`.
		if err := s.publish(summary); err != nil {
			s.deps.notice("warning: could not leave this process's summary for hammer report: " + human.FirstLine(err.Error()))
		}
	}
	last := false
	if s.opts.KeepKeys {
		if others, err := s.leave(); err == nil && others == 0 {
			// Nobody deletes the kept keys: take the closing mark back so the next run may join.
			ctx, cancel := context.WithTimeout(context.Background(), s.deps.Timeout)
			s.rdb.ZRem(ctx, s.keys.Participants(), closingMember)
			cancel()
			last = true
		}
		res.KeysKept = s.keptKeys()
	} else {
		var rep runkeys.CleanupReport
		rep, last = s.cleanup()
		res.KeysDeleted, res.KeysNotDeleted, res.CleanupWarnings = rep.Deleted, rep.Failed, rep.Warnings
	}
	if runErr != nil {
		return res, runErr
	}
	rules := s.opts.Rules()
	if last && s.timeline != nil {
		s.judgeAsLast(&summary)
		res.Summary = summary
		rules.Shared = summary.Strategies[0].RefusalsUnjudged == bench.RefusalsShared
	}
	res.Judgement = Judge(rules, summary)
	res.Interrupted = summary.Interrupted || ctx.Err() != nil
	return res, nil
}

// leave ends this process's part in a shared run and reports how many others still run.
func (s *session) leave() (others int64, err error) {
	if s.peers == nil {
		return 0, nil
	}
	others, err = s.peers.leave(s.deps.Timeout)
	s.peers = nil
	return others, err
}

// cleanup deletes the run's keys, reporting each failure as a notice; in a run shared by id
// only the last process to finish deletes them (last).
func (s *session) cleanup() (rep runkeys.CleanupReport, last bool) {
	others, err := s.leave()
	if err != nil {
		w := human.FirstLine(err.Error()) + "; the run's keys were left in place (they expire on their own)"
		s.deps.notice("warning: " + w)
		return runkeys.CleanupReport{Warnings: []string{w}}, false
	}
	if others > 0 {
		s.deps.notice(fmt.Sprintf("keys left under %s for %d other process(es) still running with run id %s; the last to finish deletes them",
			s.keys.Describe(), others, s.keys.RunID))
		return runkeys.CleanupReport{}, false
	}
	if len(s.opts.Strategies) > 0 {
		rep = s.keys.Cleanup(s.rdb, s.deps.Timeout)
	}
	if app := s.appKeys(); len(app.Patterns) > 0 {
		theirs := app.Cleanup(s.rdb, s.deps.Timeout)
		rep.Deleted, rep.Failed, rep.Warnings = rep.Deleted+theirs.Deleted, rep.Failed+theirs.Failed, append(rep.Warnings, theirs.Warnings...)
	}
	for _, w := range rep.Warnings {
		s.deps.notice("warning: " + w)
	}
	return rep, true
}

func serverVersion(ctx context.Context, rdb redis.UniversalClient) string {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}
