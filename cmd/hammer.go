package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/lint"
	"github.com/limitctl/limitctl/internal/redisconn"
	htmlreport "github.com/limitctl/limitctl/internal/report"
	"github.com/limitctl/limitctl/internal/tui"
)

type hammerOptions struct {
	limiter    string
	strategies []string
	workers    int
	limit      int64
	duration   time.Duration
	requests   int64
	hold       time.Duration
	window     time.Duration
	staleAfter time.Duration
	rate       float64
	keys       int
	script     string
	noLint     bool
	witness    string
	asserts    []string
	onError    string
	tui        string
	report     string
	prefix     string
	runID      string
	keepKeys   bool
	embedded   string
	inject     []string

	// resolved by validate
	kind         limiter.Kind
	strategyList []limiter.Strategy
	assertions   []bench.Assertion
	customSource string
	events       []injectEvent
}

func newHammerCmd(f *Factory) *cobra.Command {
	opts := &hammerOptions{}
	c := &cobra.Command{
		Use:   "hammer",
		Short: "Concurrent load that proves or disproves overshoot, with asserts for CI",
		Long: `Drives a limiter from many workers at once, in several strategies side by side, each on its
own keys, and measures overshoot from evidence: a witness of requests that really held a slot
at the same time (concurrency), or the admitted timestamps checked against the limiter's
invariant (windows, token bucket). A correct atomic strategy shows 0.

Without --url/--addr the hammer starts a throw-away redis-server on a free loopback port (or an
in-process server when none is installed). Keys live under <prefix>:{<run-id>}... and are
deleted at the end, also on Ctrl-C, unless --keep-keys.

The token bucket uses --limit as its burst and refills --limit tokens per --window.

Assertions (k6-style; a failed one exits 3): strategy.metric OP value, with OP one of
== != < <= > >=; latency takes units (lua.p99<5ms, a bare number is milliseconds). Metrics:
` + wrapWords(strings.Join(bench.MetricNames(), ", "), 92),
		Example: `  limitctl hammer
  limitctl hammer --strategies naive,lua --duration 5s --assert 'lua.overshoot==0' --assert 'naive.overshoot>0'
  limitctl hammer --limiter sliding-window --limit 100 --window 1s --strategies watch,lua,function
  limitctl hammer --script ours.lua --assert 'custom.overshoot==0' -o json`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.validate(c, f); err != nil {
				return err
			}
			return runHammer(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.limiter, "limiter", "concurrency", "limiter: concurrency, fixed-window, sliding-window or token-bucket")
	fl.StringSliceVar(&opts.strategies, "strategies", []string{"naive", "lua"}, "strategies to run side by side: naive, multi, watch, lua, eval, function, lua-ts-member, custom")
	fl.IntVar(&opts.workers, "workers", 64, "concurrent workers per strategy")
	fl.Int64Var(&opts.limit, "limit", 20, "the limit: in-flight requests, requests per window, or the bucket's burst")
	fl.DurationVar(&opts.duration, "duration", 10*time.Second, "how long to run (pauses excluded)")
	fl.Int64Var(&opts.requests, "requests", 0, "stop after this many decisions per strategy instead of after --duration")
	fl.DurationVar(&opts.hold, "hold", 2*time.Millisecond, "how long an admitted request holds its slot")
	fl.DurationVar(&opts.window, "window", time.Second, "window of the window limiters; the token bucket refills --limit per window")
	fl.DurationVar(&opts.staleAfter, "stale-after", 0, "concurrency: members older than this are reclaimed as abandoned (default max(10s, 100 x hold))")
	fl.Float64Var(&opts.rate, "rate", 0, "open loop: decisions per second per strategy, latency timed from each scheduled start (default: closed loop)")
	fl.IntVar(&opts.keys, "keys", 1, "limiter keys per strategy (spread over cluster slots by hash tags)")
	fl.StringVar(&opts.script, "script", "", "a Lua script with the limiter's KEYS/ARGV contract, run as strategy custom")
	fl.BoolVar(&opts.noLint, "no-lint", false, "run a --script even when lint finds errors")
	fl.StringVar(&opts.witness, "witness", "local", "concurrency witness: local (in-process) or redis (shared by several hammer processes)")
	fl.StringArrayVar(&opts.asserts, "assert", nil, "threshold that must hold, e.g. 'lua.overshoot==0' (repeatable; exit 3 if one fails)")
	fl.StringVar(&opts.onError, "on-error", "closed", "when Redis errors or times out: open (admit) or closed (reject); counted apart")
	fl.StringVar(&opts.tui, "tui", "auto", "live dashboard: auto (when stdin and stdout are terminals), on, off")
	fl.StringVar(&opts.report, "report", "", "write a self-contained HTML report to this file")
	fl.StringVar(&opts.prefix, "prefix", "limitctl", "key prefix")
	fl.StringVar(&opts.runID, "run-id", "", "share keys with other hammer processes that pass the same id (default: random); with --witness redis they prove overshoot together")
	fl.BoolVar(&opts.keepKeys, "keep-keys", false, "leave the run's keys in Redis")
	fl.StringVar(&opts.embedded, "embedded", "auto", "server without --url/--addr: auto, redis-server or memory (in-process)")
	fl.StringArrayVar(&opts.inject, "inject", nil, "fault events: flush-scripts@2s, pause@3s:500ms, kill@4s, restart@5s (kill/restart on the spawned server)")
	c.RegisterFlagCompletionFunc("limiter", fixedCompletion(limiterNames()...))
	c.RegisterFlagCompletionFunc("strategies", listCompletion(hammerStrategies))
	c.RegisterFlagCompletionFunc("on-error", fixedCompletion("open", "closed"))
	c.RegisterFlagCompletionFunc("tui", fixedCompletion("auto", "on", "off"))
	c.RegisterFlagCompletionFunc("witness", fixedCompletion("local", "redis"))
	c.RegisterFlagCompletionFunc("embedded", fixedCompletion("auto", "redis-server", "memory"))
	c.RegisterFlagCompletionFunc("script", luaFiles)
	c.MarkFlagFilename("report", "html")
	return c
}

// validate checks every flag before anything connects or sends load.
func (o *hammerOptions) validate(c *cobra.Command, f *Factory) error {
	var err error
	if o.kind, err = limiter.ParseKind(o.limiter); err != nil {
		return usagef("--limiter: %v", err)
	}
	if o.script != "" && !c.Flags().Changed("strategies") {
		o.strategies = []string{string(limiter.Custom)}
	}
	seen := map[limiter.Strategy]bool{}
	for _, name := range o.strategies {
		s, err := limiter.ParseStrategy(strings.TrimSpace(name))
		if err != nil {
			return usagef("--strategies: %v", err)
		}
		if seen[s] {
			return usagef("--strategies: %s given twice", s)
		}
		if !limiter.Supports(o.kind, s) {
			return usagef("--strategies: %s applies only to the concurrency and sliding-window limiters", s)
		}
		seen[s] = true
		o.strategyList = append(o.strategyList, s)
	}
	if len(o.strategyList) == 0 {
		return usagef("--strategies: give at least one strategy")
	}
	if seen[limiter.Custom] != (o.script != "") {
		if o.script == "" {
			return usagef("strategy custom needs --script FILE.lua")
		}
		return usagef("--script runs as strategy custom: add custom to --strategies")
	}
	switch {
	case o.workers < 1 || o.workers > 10000:
		return usagef("--workers must be 1-10000, got %d", o.workers)
	case o.limit < 0:
		return usagef("--limit must be 0 or more, got %d", o.limit)
	case o.kind == limiter.TokenBucket && o.limit < 1:
		return usagef("--limit is the token bucket's burst and must be at least 1")
	case c.Flags().Changed("duration") && c.Flags().Changed("requests"):
		return usagef("give --duration or --requests, not both")
	case o.duration <= 0:
		return usagef("--duration must be positive, got %s", o.duration)
	case o.requests < 0 || (c.Flags().Changed("requests") && o.requests == 0):
		return usagef("--requests must be positive, got %d", o.requests)
	case o.hold < 0:
		return usagef("--hold must be 0 or more, got %s", o.hold)
	case o.window < time.Millisecond:
		return usagef("--window must be at least 1ms, got %s", o.window)
	case o.window > 24*time.Hour:
		return usagef("--window must be at most 24h, got %s", o.window)
	case o.staleAfter < 0:
		return usagef("--stale-after must be positive, got %s", o.staleAfter)
	case o.rate < 0 || o.rate > 10_000_000:
		return usagef("--rate must be 0 (closed loop) up to 10000000, got %g", o.rate)
	case o.keys < 1 || o.keys > 10000:
		return usagef("--keys must be 1-10000, got %d", o.keys)
	case o.prefix == "" || strings.ContainsAny(o.prefix, "{}*?[] \t\n"):
		return usagef("--prefix must be non-empty without braces, glob characters or spaces, got %q", o.prefix)
	}
	if o.runID != "" && !validRunID(o.runID) {
		return usagef("--run-id must be 1-64 letters, digits, '-' or '_', got %q", o.runID)
	}
	if c.Flags().Changed("requests") {
		o.duration = 0
	}
	if o.staleAfter == 0 {
		o.staleAfter = max(10*time.Second, 100*o.hold)
	}
	switch o.witness {
	case "local", "redis":
	default:
		return usagef("--witness must be local or redis, got %q", o.witness)
	}
	switch o.onError {
	case "open", "closed":
	default:
		return usagef("--on-error must be open or closed, got %q", o.onError)
	}
	switch o.tui {
	case "auto", "off":
	case "on":
		if !f.IO.StdoutTTY || !f.IO.StdinTTY {
			return usagef("--tui on needs a terminal on stdin and stdout; use --tui off (or auto) when piped")
		}
	default:
		return usagef("--tui must be auto, on or off, got %q", o.tui)
	}
	switch o.embedded {
	case "auto", embedded.KindRedisServer, embedded.KindMemory:
	default:
		return usagef("--embedded must be auto, redis-server or memory, got %q", o.embedded)
	}
	hasTarget := f.Conn.HasTarget() || f.Getenv("REDIS_URL") != ""
	if c.Flags().Changed("embedded") && hasTarget {
		return usagef("--embedded applies only without --url/--addr/REDIS_URL")
	}
	names := make([]string, len(o.strategyList))
	for i, s := range o.strategyList {
		names[i] = string(s)
	}
	for _, expr := range o.asserts {
		a, err := bench.ParseAssertion(expr, names)
		if err != nil {
			return usagef("--assert: %v", err)
		}
		o.assertions = append(o.assertions, a)
	}
	if o.events, err = parseInjects(o.inject, hasTarget); err != nil {
		return err
	}
	if o.report != "" {
		if err := checkWritable(o.report); err != nil {
			return usagef("--report: %v", err)
		}
	}
	if o.script != "" {
		if o.customSource, err = readScriptFile(o.script); err != nil {
			return err
		}
	}
	return nil
}

// checkWritable makes sure the report can be written before the run spends its time.
func checkWritable(path string) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return unwrapPathError(err)
	}
	return fh.Close()
}

func validRunID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			return false
		}
	}
	return true
}

func newRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// hammerKey names a strategy's i-th limiter key. With one key per strategy every key of the run
// shares the {run-id} hash tag; with more, each index gets its own tag so keys spread over a
// cluster's slots.
func hammerKey(prefix, runID, strategy string, i, keys int) string {
	if keys == 1 {
		return fmt.Sprintf("%s:{%s}:%s", prefix, runID, strategy)
	}
	return fmt.Sprintf("%s:{%s-%d}:%s", prefix, runID, i, strategy)
}

func runHammer(ctx context.Context, f *Factory, o *hammerOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	if o.customSource != "" {
		if err := lintCustom(f, o); err != nil {
			return err
		}
	}

	// The target: the flags' server, or a throw-away one.
	var rdb redis.UniversalClient
	var target bench.Target
	var spawned *embedded.Server
	poolSize := o.workers*len(o.strategyList) + 16
	if f.Conn.HasTarget() || f.Getenv("REDIS_URL") != "" {
		f.Conn.PoolSize, f.Conn.NoCheckoutProbe = poolSize, true
		client, t, err := f.Client(ctx)
		if err != nil {
			return err
		}
		rdb, target = client, bench.Target{Kind: t.Kind, Addr: t.Addr}
	} else {
		spawned, err = embedded.Start(o.embedded)
		if err != nil {
			return err
		}
		defer spawned.Stop()
		conn := redisconn.Options{Addrs: []string{spawned.Addr}, Timeout: f.Conn.Timeout, PoolSize: poolSize, NoCheckoutProbe: true}
		client, _, err := redisconn.Open(ctx, conn, func(string) string { return "" })
		if err != nil {
			return err
		}
		defer client.Close()
		rdb, target = client, bench.Target{Kind: spawned.Kind, Addr: spawned.Addr}
		if spawned.Kind == embedded.KindMemory {
			fmt.Fprintf(f.IO.ErrOut, "target: in-process server (miniredis) on %s; its throughput is not representative of Redis\n", spawned.Addr)
		} else {
			fmt.Fprintf(f.IO.ErrOut, "target: throw-away redis-server %s on %s\n", serverVersion(ctx, rdb), spawned.Addr)
		}
	}
	if spawned == nil {
		fmt.Fprintf(f.IO.ErrOut, "target: %s %s\n", target.Kind, target.Addr)
	}

	runID := o.runID
	if runID == "" {
		runID = newRunID()
	}
	cfg := bench.Config{
		RunID: runID, Target: target, Limiter: o.kind, Limit: o.limit, Window: o.window,
		Rate: float64(o.limit) / o.window.Seconds(), Workers: o.workers, Duration: o.duration,
		Requests: o.requests, Hold: o.hold, StaleAfter: o.staleAfter, OpenRate: o.rate, KeyCount: o.keys,
		KeyFor: func(strategy string, i int) string {
			return hammerKey(o.prefix, runID, strategy, i, o.keys)
		},
		FailOpen: o.onError == "open", Horizon: f.Conn.Timeout, Now: f.Now,
		ErrorBackoff: 10 * time.Millisecond,
		ServerStats: func(ctx context.Context) (map[string]bench.CmdStat, error) {
			return bench.CommandStats(ctx, rdb)
		},
	}
	lcfg := limiter.Config{
		Limit: o.limit, Window: o.window, StaleAfter: o.staleAfter,
		Rate: cfg.Rate, Burst: o.limit, CustomSource: o.customSource,
	}
	for _, s := range o.strategyList {
		lim, err := limiter.New(o.kind, s, rdb, lcfg)
		if err != nil {
			return usagef("%v", err)
		}
		cmds, inner := limiter.Commands(o.kind, s)
		run := bench.StrategyRun{Name: string(s), Limiter: lim, Commands: cmds, Inner: inner}
		if o.witness == "redis" && o.kind == limiter.Concurrency {
			run.Witness = func(key string) bench.Checker {
				return bench.NewRedisWitness(rdb, key+":witness", o.limit, o.staleAfter, f.Conn.Timeout)
			}
		}
		cfg.Strategies = append(cfg.Strategies, run)
	}
	if err := preflight(ctx, rdb, o); err != nil {
		return err
	}
	if err := probeRun(ctx, f, rdb, o, runID, cfg.Strategies); err != nil {
		return err
	}

	dashboard := o.tui == "on" || (o.tui == "auto" && f.IO.StdinTTY && f.IO.StdoutTTY && format != "json")
	if dashboard {
		// Five frames a second read as live; each costs a couple of milliseconds of rendering
		// that the load would otherwise get.
		cfg.Tick = 200 * time.Millisecond
	}
	engine := bench.New(cfg)
	snapshots := make(chan bench.Snapshot, 4)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	var view <-chan bench.Snapshot = snapshots
	var recorder *htmlreport.Recorder
	if o.report != "" {
		recorder = htmlreport.NewRecorder(htmlreport.DefaultMaxPoints)
		view = recorder.Tee(snapshots)
	}
	viewDone := make(chan error, 1)
	if dashboard {
		opts := o.dashboardOptions(target, engine, stopRun, f.NoColor || f.Getenv("NO_COLOR") != "")
		go func() { viewDone <- tui.Run(runCtx, opts, view, f.IO.In, f.IO.Out) }()
	} else {
		go func() { viewDone <- progressLines(f.IO.ErrOut, view) }()
	}
	stopInjects := startInjects(runCtx, o.events, rdb, spawned, f.IO.ErrOut)
	summary, runErr := engine.Run(runCtx, snapshots)
	stopInjects()
	viewErr := <-viewDone
	for range view { // after q the dashboard stops reading; let the recorder see the rest
	}

	if !o.keepKeys {
		cleanupKeys(rdb, o.prefix, runID, f.Conn.Timeout, f.IO.ErrOut)
	} else {
		fmt.Fprintf(f.IO.ErrOut, "keys kept under %s:{%s...\n", o.prefix, runID)
	}
	if runErr != nil {
		return runErr
	}
	results := make([]bench.AssertionResult, len(o.assertions))
	passed := true
	var failed []string
	for i, a := range o.assertions {
		results[i] = a.Eval(summary)
		if !results[i].Passed {
			passed = false
			failed = append(failed, fmt.Sprintf("%s (actual %s)", a.Expr, formatActual(results[i].Actual)))
		}
	}
	if err := writeHammerSummary(f, format, summary, results, passed); err != nil {
		return err
	}
	if recorder != nil {
		if err := writeHammerReport(o.report, summary, recorder, results); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "report written to %s\n", o.report)
	}
	if viewErr != nil && !errors.Is(viewErr, context.Canceled) {
		return fmt.Errorf("dashboard: %w", viewErr)
	}
	if summary.Interrupted || ctx.Err() != nil {
		return &interruptedError{what: fmt.Sprintf("hammer stopped after %s; partial summary above", summary.Duration.Round(time.Millisecond))}
	}
	if !passed {
		return checkFailedf("assertion failed: %s", strings.Join(failed, "; "))
	}
	return nil
}

// lintCustom runs the linter over --script first: warnings are printed, errors stop the run
// (a failed check, exit 3) unless --no-lint.
func lintCustom(f *Factory, o *hammerOptions) error {
	diags := lint.Lint(o.script, []byte(o.customSource))
	for _, d := range diags {
		fmt.Fprintln(f.IO.ErrOut, d.String())
	}
	if lint.HasErrors(diags, false) && !o.noLint {
		return checkFailedf("lint found errors in %s; fix them or pass --no-lint", o.script)
	}
	return nil
}

// preflight loads what the strategies call by name, so the first decisions are not all
// NOSCRIPT fallbacks, and a custom script Redis rejects stops the run before any load.
func preflight(ctx context.Context, rdb redis.UniversalClient, o *hammerOptions) error {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return err
	}
	for _, s := range o.strategyList {
		switch s {
		case limiter.Function:
			if err := limiter.LoadFunctions(ctx, rdb); isPermissionError(err) {
				return fmt.Errorf("strategy function cannot load its library: FUNCTION LOAD: %s", oneLine(err.Error()))
			} else if err != nil {
				return fmt.Errorf("strategy function needs Redis 7 Functions: FUNCTION LOAD failed: %s", redisReason(err))
			}
		case limiter.Lua, limiter.LuaTSMember, limiter.Custom:
			src, what := limiter.ScriptFor(o.kind).Source, "the "+limiter.ScriptFor(o.kind).Name+" script"
			if s == limiter.Custom {
				src, what = o.customSource, o.script
			}
			for _, m := range masters {
				if err := m.ScriptLoad(ctx, src).Err(); isPermissionError(err) {
					return fmt.Errorf("strategy %s cannot load %s: SCRIPT LOAD: %s", s, what, oneLine(err.Error()))
				} else if err != nil {
					return fmt.Errorf("Redis rejected %s: %s", what, redisReason(err))
				}
			}
		}
	}
	return nil
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

// cleanupKeys deletes the run's keys on every master (SCAN, never KEYS), bounded in time,
// also after an interrupt.
func cleanupKeys(rdb redis.UniversalClient, prefix, runID string, timeout time.Duration, errOut io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+timeout)
	defer cancel()
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		fmt.Fprintf(errOut, "warning: could not delete the run's keys: %s\n", oneLine(err.Error()))
		return
	}
	pattern := prefix + ":{" + runID + "*"
	for _, m := range masters {
		iter := m.Scan(ctx, 0, pattern, 1000).Iterator()
		var batch []string
		flush := func() {
			if len(batch) > 0 {
				// One UNLINK per key: in a cluster the keys of one batch may sit in different slots.
				pipe := m.Pipeline()
				for _, k := range batch {
					pipe.Unlink(ctx, k)
				}
				pipe.Exec(ctx)
				batch = batch[:0]
			}
		}
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				flush()
			}
		}
		flush()
		if err := iter.Err(); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(errOut, "warning: could not delete all of the run's keys on %s: %s\n", redisconn.NodeAddr(m), oneLine(err.Error()))
		}
	}
}

// dashboardOptions are the static facts and controls the live dashboard shows; asserts are
// judged live on every snapshot.
func (o *hammerOptions) dashboardOptions(target bench.Target, engine *bench.Engine, quit func(), noColor bool) tui.Options {
	exprs := make([]string, len(o.assertions))
	for i, a := range o.assertions {
		exprs[i] = a.Expr
	}
	return tui.Options{
		Target: target, Limiter: o.kind, Limit: o.limit, Workers: o.workers, Total: o.duration,
		Asserts: exprs, Controls: engine, Quit: quit, NoColor: noColor,
		Judge: func(s bench.Snapshot) []tui.AssertResult {
			sum := bench.Summary{Limiter: s.Limiter, Limit: s.Limit, Strategies: s.Strategies}
			out := make([]tui.AssertResult, len(o.assertions))
			for i, a := range o.assertions {
				r := a.Eval(sum)
				out[i] = tui.AssertResult{Expr: r.Expr, Known: r.Actual != nil, Passed: r.Passed, Actual: formatActual(r.Actual)}
			}
			return out
		},
	}
}

// writeHammerReport writes the self-contained HTML report of the run.
func writeHammerReport(path string, summary bench.Summary, rec *htmlreport.Recorder, results []bench.AssertionResult) error {
	asserts := make([]htmlreport.Assertion, len(results))
	for i, r := range results {
		asserts[i] = htmlreport.Assertion{Expr: r.Expr, Passed: r.Passed, Actual: formatActual(r.Actual)}
	}
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--report: %v", unwrapPathError(err))
	}
	if err := htmlreport.Write(fh, htmlreport.Data{Summary: summary, Series: rec.Series(), Assertions: asserts, Generated: time.Now()}); err != nil {
		fh.Close()
		return fmt.Errorf("--report: %w", err)
	}
	return fh.Close()
}

// wrapWords breaks text into lines of at most width characters, at spaces.
func wrapWords(text string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(text) {
		if i > 0 && line+1+len(w) > width {
			b.WriteString("\n")
			line = 0
		} else if i > 0 {
			b.WriteString(" ")
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// redisReason is Redis's complaint without the command's arguments, which some servers echo
// back ("with args beginning with: ..." would repeat a whole script).
func redisReason(err error) string {
	msg := oneLine(err.Error())
	if i := strings.Index(msg, ", with args beginning with"); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}
