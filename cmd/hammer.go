package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/embedded"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiter"
	htmlreport "github.com/limitctl/limitctl/internal/report"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/tui"
)

// hammerOptions are the hammer's flags as given; validate turns them into run.
// defaultConcurrencyHold is how long a concurrency slot is held unless --hold says otherwise:
// long enough that 64 workers contend a limit of 20. Window and bucket limiters have no slot,
// so their default is 0: a pause after each admit would only slow the load (at 2ms a
// fixed-window run with a high limit made about 40% of the decisions/s it makes at 0).
const defaultConcurrencyHold = 2 * time.Millisecond

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
	conns      int
	script     string
	noLint     bool
	witness    string
	asserts    []string
	onError    string
	tui        string
	report     string
	junit      string
	prefix     string
	runID      string
	keepKeys   bool
	embedded   string
	inject     []string

	// the custom script's calling contract (SPEC section 7) and the load shape
	scriptKeys, scriptArgs, scriptAllowed, scriptRelease, clock string
	profile                                                     string
	skew                                                        time.Duration

	run       hammer.Options // resolved by validate
	hasTarget bool           // --url, --addr or REDIS_URL: the user's server, not a spawned one
}

// newHammerCmd binds the hammer's flags; runF runs the validated options (runHammer, or a
// test's stand-in that needs no server).
func newHammerCmd(f *Factory, runF func(context.Context, *Factory, *hammerOptions) error) *cobra.Command {
	if runF == nil {
		runF = runHammer
	}
	opts := &hammerOptions{}
	c := &cobra.Command{
		Use:   "hammer",
		Short: "Concurrent load that proves or disproves overshoot and refusals with room, with asserts for CI",
		Long: `Drives a limiter from many workers at once, in several strategies side by side, each on its
own keys, and measures overshoot from evidence: a witness of requests that really held a slot
at the same time (concurrency), or the admitted timestamps checked against the limiter's
invariant (windows, token bucket). A correct atomic strategy shows 0. It also proves refusals
wrong (false_rejects): refused while every correct limiter of the kind certainly had room. With
--run-id other processes may share the keys, so no refusal is judged.

Without --url/--addr the hammer starts a throw-away redis-server on a free loopback port (or an
in-process server when none is installed). Keys live under <prefix>:{<run-id>}:<strategy>
(with --keys N, <prefix>:{<run-id>.<i>}:<strategy>), plus window counters and the witness under
those names. At the end, also on Ctrl-C, exactly those keys are deleted unless --keep-keys:
another run id that merely starts the same, or a key of yours under the prefix, is never touched.

The token bucket uses --limit as its burst and refills --limit tokens per --window.

--hold is how long an admitted request holds its concurrency slot (default 2ms). Window and
bucket limiters have no slot: there --hold is a think time after each admitted request, 0
unless given, so the load runs as fast as the server answers.

` + wrapWords(`A script you already have runs as strategy custom with its own calling contract:
--script-keys and --script-args are templates of words (a "quoted word" may hold spaces; "" is
an empty one) with placeholders {`+strings.Join(contract.Placeholders(), "} {")+`}. A word
with {slot} repeats once per slot, 1 to --limit (a key per slot); {reply}, in --script-release
only, is the acquire's reply (the slot taken). --script-allowed is a Lua expression over reply
(integer -> number, bulk -> string, array -> table, nil -> false) and may use the run's fixed
values, e.g. 'reply[1] <= {limit}'. A script given no {now_*} time reads TIME itself (--clock
server): its evidence then counts only admits certainly inside one window, by when each call
was sent and answered. Without an --assert on custom.overshoot the run checks
custom.overshoot==0 itself: an overshoot, or a limit never reached, exits 3; without one on
custom.false_rejects, custom.false_rejects==0: a refusal with room exits 3 (TOO STRICT).`, 92) + `

For the window and bucket limiters the default load is bursty (idle spells longer than a
window, so refill and expiry bugs show), and for the window limiters the workers' clocks are
skewed by up to 5ms (requests reach Redis out of their time order); --profile steady --skew 0
gives plain load for throughput numbers.

Connections: by default every worker has a connection of its own with one call in flight, so
the latency printed is one round trip and nothing else: the truest latency, but one process
cannot push a Redis to its limit that way. --conns N lets each strategy's workers share N
connections: a connection sends every call pending when it is free as one pipeline, which is
how a server reaches its throughput, and each call's latency then includes its wait for the
batch ahead of it. Use the default to measure latency, --conns (e.g. --workers 256 --conns 8)
to measure what the server can take. watch and multi hold a connection per transaction, so
with --conns their workers share the N connections without pipelining.

For CI: --junit F.xml writes a JUnit report (a test case per assertion and per strategy's
verdict, failing exactly when the run exits 3), and when GITHUB_STEP_SUMMARY is set (GitHub
Actions) a Markdown summary of the verdicts and assertions is appended to that file.

Assertions (k6-style; a failed one exits 3): strategy.metric OP value, with OP one of
== != < <= > >=; latency takes units (lua.p99<5ms, a bare number is milliseconds). Metrics:
` + wrapWords(strings.Join(bench.MetricNames(), ", "), 92),
		Example: `  limitctl hammer
  limitctl hammer --strategies naive,lua --duration 5s --assert 'lua.overshoot==0' --assert 'naive.overshoot>0'
  limitctl hammer --limiter sliding-window --limit 100 --window 1s --strategies watch,lua,function
  limitctl hammer --script ours.lua --assert 'custom.overshoot==0' -o json
  limitctl hammer --script ours.lua --junit hammer.xml   # for Jenkins, GitLab, CircleCI
  limitctl hammer --limiter token-bucket --script gcra.lua --script-args '{burst} {limit} {window_s} {cost}' --script-allowed 'reply[1] > 0'`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.validate(c, f); err != nil {
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.limiter, "limiter", "concurrency", "limiter: concurrency, fixed-window, sliding-window or token-bucket")
	fl.StringSliceVar(&opts.strategies, "strategies", []string{"naive", "lua"}, "strategies to run side by side: naive, multi, watch, lua, eval, function, lua-ts-member, custom")
	fl.IntVar(&opts.workers, "workers", 64, "concurrent workers per strategy")
	fl.Int64Var(&opts.limit, "limit", 20, "the limit: in-flight requests, requests per window, or the bucket's burst")
	fl.DurationVar(&opts.duration, "duration", 10*time.Second, "how long to run (pauses excluded)")
	fl.Int64Var(&opts.requests, "requests", 0, "stop after this many decisions per strategy instead of after --duration")
	fl.DurationVar(&opts.hold, "hold", 0, "concurrency: how long an admitted request holds its slot (default 2ms); window and bucket limiters: a think time after each admit (default 0)")
	fl.DurationVar(&opts.window, "window", time.Second, "window of the window limiters; the token bucket refills --limit per window")
	fl.DurationVar(&opts.staleAfter, "stale-after", 0, "concurrency: members older than this are reclaimed as abandoned; at least 1ms and longer than --hold (default max(10s, 100 x hold))")
	fl.Float64Var(&opts.rate, "rate", 0, "open loop: decisions per second per strategy, latency timed from each scheduled start (default: closed loop)")
	fl.IntVar(&opts.conns, "conns", 0, "connections per strategy, shared by its workers with their calls pipelined (default 0: one per worker; see above)")
	fl.IntVar(&opts.keys, "keys", 1, "limiter keys per strategy (spread over cluster slots by hash tags)")
	fl.StringVar(&opts.script, "script", "", "a Lua script to run as strategy custom (its contract: --script-keys, --script-args, --script-allowed; default the limiter's shipped one)")
	fl.BoolVar(&opts.noLint, "no-lint", false, "run a --script even when lint finds errors")
	fl.StringVar(&opts.scriptKeys, "script-keys", "", "the script's KEYS as a template, e.g. '{key}:{window_index} {key}:{prev_window_index}' (default: the limiter's shipped contract)")
	fl.StringVar(&opts.scriptArgs, "script-args", "", "the script's ARGV as a template, e.g. '{limit} {now_ms} {window_ms} \"\"' (default: the limiter's shipped contract)")
	fl.StringVar(&opts.scriptAllowed, "script-allowed", "", "Lua expression over reply, true when admitted, e.g. 'reply == 0' (default: reply[1] == 1)")
	fl.StringVar(&opts.scriptRelease, "script-release", "", "concurrency: the release as a command template, or none (default: ZREM {key} {member})")
	fl.StringVar(&opts.clock, "clock", "", "whose clock the script uses: client (passed as {now_*}) or server (it reads TIME) (default: client when a {now_*} or window placeholder is passed, else server)")
	fl.StringVar(&opts.profile, "profile", "", "load shape: steady, or bursty (idle spells of 1.5 windows after 2 windows of load, so refill and expiry bugs surface) (default bursty for the window and bucket limiters, steady for concurrency)")
	fl.DurationVar(&opts.skew, "skew", 0, "offset each worker's clock by a fixed amount within ±skew, as app servers' clocks disagree (default 5ms for the window limiters, 0 for the others: one clock)")
	fl.StringVar(&opts.witness, "witness", "local", "evidence: local (in-process) or redis (shared by the hammer processes of one --run-id: the concurrency witness, and the windows' and buckets' admitted times)")
	fl.StringArrayVar(&opts.asserts, "assert", nil, "threshold that must hold, e.g. 'lua.overshoot==0' (repeatable; exit 3 if one fails)")
	fl.StringVar(&opts.onError, "on-error", "closed", "when Redis errors or times out: open (admit) or closed (reject); counted apart")
	fl.StringVar(&opts.tui, "tui", "auto", "live dashboard: auto (when stdin and stdout are terminals), on, off")
	fl.StringVar(&opts.report, "report", "", "write a self-contained HTML report to this file")
	fl.StringVar(&opts.junit, "junit", "", "write a JUnit XML report to this file for CI (a test case per assertion and per strategy's verdict)")
	fl.StringVar(&opts.prefix, "prefix", "limitctl", "key prefix")
	fl.StringVar(&opts.runID, "run-id", "", "share keys with other hammer processes that pass the same id (default: random); with --witness redis they prove overshoot together; only the last of them to finish deletes the keys")
	fl.BoolVar(&opts.keepKeys, "keep-keys", false, "leave the run's keys in Redis")
	fl.StringVar(&opts.embedded, "embedded", "auto", "server without --url/--addr: auto, redis-server or memory (in-process)")
	fl.StringArrayVar(&opts.inject, "inject", nil, "fault events: flush-scripts@2s, pause@3s:500ms, kill@4s, restart@5s (kill/restart on the spawned server)")
	c.AddCommand(newHammerReportCmd(f))
	c.RegisterFlagCompletionFunc("limiter", fixedCompletion(limiterNames()...))
	c.RegisterFlagCompletionFunc("strategies", listCompletion(hammerStrategies))
	c.RegisterFlagCompletionFunc("on-error", fixedCompletion("open", "closed"))
	c.RegisterFlagCompletionFunc("tui", fixedCompletion("auto", "on", "off"))
	c.RegisterFlagCompletionFunc("witness", fixedCompletion("local", "redis"))
	c.RegisterFlagCompletionFunc("embedded", fixedCompletion("auto", "redis-server", "memory"))
	c.RegisterFlagCompletionFunc("clock", fixedCompletion("client", "server"))
	c.RegisterFlagCompletionFunc("profile", fixedCompletion(bench.ProfileSteady, bench.ProfileBursty))
	c.RegisterFlagCompletionFunc("script", luaFiles)
	c.MarkFlagFilename("report", "html")
	c.MarkFlagFilename("junit", "xml")
	return c
}

// validate checks every flag before anything connects or sends load, and resolves them into
// the session's options.
func (o *hammerOptions) validate(c *cobra.Command, f *Factory) error {
	r := &o.run
	var err error
	if r.Limiter, err = limiter.ParseKind(o.limiter); err != nil {
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
		if !limiter.Supports(r.Limiter, s) {
			return usagef("--strategies: %s applies only to the concurrency and sliding-window limiters", s)
		}
		seen[s] = true
		r.Strategies = append(r.Strategies, s)
	}
	if len(r.Strategies) == 0 {
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
	case r.Limiter == limiter.TokenBucket && o.limit < 1:
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
	case o.window%time.Millisecond != 0:
		// The scripts take whole milliseconds; the evidence would judge a window they never use.
		return usagef("--window must be a whole number of milliseconds, got %s", o.window)
	case o.staleAfter < 0 || (c.Flags().Changed("stale-after") && o.staleAfter < time.Millisecond):
		// The scripts take milliseconds: below one, every call would reclaim every member.
		return usagef("--stale-after must be at least 1ms, got %s", o.staleAfter)
	case o.staleAfter%time.Millisecond != 0:
		return usagef("--stale-after must be a whole number of milliseconds, got %s", o.staleAfter)
	case r.Limiter == limiter.Concurrency && c.Flags().Changed("stale-after") && o.staleAfter <= o.hold:
		return usagef("--stale-after %s must be longer than --hold %s: the limiter would reclaim requests still held as abandoned", o.staleAfter, o.hold)
	case o.rate < 0 || o.rate > 10_000_000:
		return usagef("--rate must be 0 (closed loop) up to 10000000, got %g", o.rate)
	case o.keys < 1 || o.keys > 10000:
		return usagef("--keys must be 1-10000, got %d", o.keys)
	case o.conns < 0 || o.conns > 10000:
		return usagef("--conns must be 0 (one per worker) up to 10000, got %d", o.conns)
	case o.prefix == "" || strings.ContainsAny(o.prefix, "{}*?[]\\ \t\n"):
		return usagef("--prefix must be non-empty without braces, glob characters, backslashes or spaces, got %q", o.prefix)
	}
	if o.runID != "" && !hammer.ValidRunID(o.runID) {
		return usagef("--run-id must be 1-64 letters, digits, '-' or '_', got %q", o.runID)
	}
	if !c.Flags().Changed("hold") && r.Limiter == limiter.Concurrency {
		o.hold = defaultConcurrencyHold
	}
	r.Workers, r.Limit, r.Hold, r.Window, r.OpenRate, r.Keys, r.Conns = o.workers, o.limit, o.hold, o.window, o.rate, o.keys, o.conns
	r.Duration, r.Requests = o.duration, o.requests
	if c.Flags().Changed("requests") {
		r.Duration = 0
	}
	r.StaleAfter = o.staleAfter
	if r.StaleAfter == 0 {
		r.StaleAfter = max(10*time.Second, 100*o.hold)
	}
	switch o.witness {
	case "local", "redis":
		r.RedisWitness = o.witness == "redis"
	default:
		return usagef("--witness must be local or redis, got %q", o.witness)
	}
	switch o.onError {
	case "open", "closed":
		r.FailOpen = o.onError == "open"
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
		r.Embedded = o.embedded
	default:
		return usagef("--embedded must be auto, redis-server or memory, got %q", o.embedded)
	}
	o.hasTarget = f.Conn.HasTarget() || f.Getenv("REDIS_URL") != ""
	if c.Flags().Changed("embedded") && o.hasTarget {
		return usagef("--embedded applies only without --url/--addr/REDIS_URL")
	}
	names := make([]string, len(r.Strategies))
	for i, s := range r.Strategies {
		names[i] = string(s)
	}
	for _, expr := range o.asserts {
		a, err := bench.ParseAssertion(expr, names)
		if err != nil {
			return usagef("--assert: %v", err)
		}
		r.Assertions = append(r.Assertions, a)
	}
	if r.Injects, err = hammer.ParseInjects(o.inject, o.hasTarget); err != nil {
		return err
	}
	if o.report != "" {
		if err := checkWritable(o.report); err != nil {
			return usagef("--report: %v", err)
		}
	}
	if o.junit != "" {
		if err := checkWritable(o.junit); err != nil {
			return usagef("--junit: %v", err)
		}
	}
	if err := o.validateContract(c); err != nil {
		return err
	}
	switch o.profile {
	case "":
		r.Profile = bench.DefaultProfile(r.Limiter)
	case bench.ProfileSteady, bench.ProfileBursty:
		r.Profile = o.profile
	default:
		return usagef("--profile must be steady or bursty, got %q", o.profile)
	}
	if o.skew < 0 || o.skew > time.Minute {
		return usagef("--skew must be 0 up to 1m, got %s", o.skew)
	}
	r.Skew = o.skew
	if !c.Flags().Changed("skew") {
		r.Skew = bench.DefaultSkew(r.Limiter)
	}
	if o.script != "" {
		if r.ScriptSource, err = scriptcache.ReadFile(o.script); err != nil {
			return err
		}
		r.Script, r.NoLint = o.script, o.noLint
	}
	r.Prefix, r.RunID, r.KeepKeys = o.prefix, o.runID, o.keepKeys
	return nil
}

// validateContract compiles the custom script's calling contract, so a template or expression
// error stops the run before any load (exit 2, naming the flag and the column).
func (o *hammerOptions) validateContract(c *cobra.Command) error {
	flags := []string{"script-keys", "script-args", "script-allowed", "script-release", "clock"}
	for _, name := range flags {
		if c.Flags().Changed(name) && o.script == "" {
			return usagef("--%s describes a custom script: give --script FILE.lua", name)
		}
	}
	if o.script == "" {
		return nil
	}
	if c.Flags().Changed("script-release") && o.run.Limiter != limiter.Concurrency {
		return usagef("--script-release applies only to the concurrency limiter")
	}
	spec := contract.Spec{Keys: o.scriptKeys, Args: o.scriptArgs, Allowed: o.scriptAllowed, Release: o.scriptRelease, Clock: o.clock}
	if c.Flags().Changed("script-args") && strings.TrimSpace(o.scriptArgs) == "" {
		spec.Args = " " // given empty: a script that takes no ARGV, not the shipped contract
	}
	ct, err := contract.Compile(spec, limiter.DefaultContract(o.run.Limiter))
	if err != nil {
		return usagef("%v", err)
	}
	o.run.Contract = ct
	return nil
}

// checkWritable makes sure the report can be written before the run spends its time, without
// creating or truncating it: a refused or failed run leaves nothing behind.
func checkWritable(path string) error {
	if fh, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		return fh.Close() // an existing file is replaced only when the report is written
	} else if !errors.Is(err, fs.ErrNotExist) {
		return scriptcache.UnwrapPathError(err)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".limitctl-report-*")
	if err != nil {
		return scriptcache.UnwrapPathError(err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// runHammer runs the session with the live view the streams call for, then prints its result.
func runHammer(ctx context.Context, f *Factory, o *hammerOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	run := o.run
	dashboard := o.tui == "on" || (o.tui == "auto" && f.IO.StdinTTY && f.IO.StdoutTTY && format != "json")
	if dashboard {
		// Five frames a second read as live; each costs a couple of milliseconds of rendering
		// that the load would otherwise get.
		run.Tick = 200 * time.Millisecond
	}
	var recorder *htmlreport.Recorder
	if o.report != "" {
		recorder = htmlreport.NewRecorder(htmlreport.DefaultMaxPoints)
	}
	deps := hammer.Deps{
		Timeout: f.Conn.Timeout,
		Now:     f.Now,
		Notice:  func(line string) { fmt.Fprintln(f.IO.ErrOut, line) },
		Watch: func(ctx context.Context, live hammer.Live, snapshots <-chan bench.Snapshot) error {
			view := snapshots
			if recorder != nil {
				view = recorder.Tee(snapshots)
			}
			var err error
			if dashboard {
				err = tui.Run(ctx, dashboardOptions(run, live, f.NoColor || f.Getenv("NO_COLOR") != ""), view, f.IO.In, f.IO.Out)
			} else {
				err = progressLines(f.IO.ErrOut, view)
			}
			for range view { // after q the dashboard stops reading; let the recorder see the rest
			}
			return err
		},
	}
	if o.hasTarget {
		deps.Connect = func(ctx context.Context, poolSize int) (redis.UniversalClient, bench.Target, error) {
			f.Conn.PoolSize, f.Conn.NoCheckoutProbe = poolSize, true
			client, t, err := f.Client(ctx)
			return client, bench.Target{Kind: t.Kind, Addr: t.Addr}, err
		}
	}
	started := f.Now()
	res, err := hammer.Run(ctx, run, deps)
	if err != nil {
		return checkOutcome(f, err, writeHammerCI(f, o, started, res, err))
	}
	if res.KeysKept != "" {
		fmt.Fprintf(f.IO.ErrOut, "keys kept under %s\n", res.KeysKept)
	}
	if err := writeHammerSummary(f, format, res); err != nil {
		return err
	}
	if recorder != nil {
		if err := writeHammerReport(o.report, res.Summary, recorder, res.Assertions); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "report written to %s\n", o.report)
	}
	return checkOutcome(f, res.Err(), writeHammerCI(f, o, started, res, nil))
}

// dashboardOptions are the static facts and controls the live dashboard shows; asserts are
// judged live on every snapshot.
func dashboardOptions(o hammer.Options, live hammer.Live, noColor bool) tui.Options {
	exprs := make([]string, len(o.Assertions))
	for i, a := range o.Assertions {
		exprs[i] = a.Expr
	}
	return tui.Options{
		Target: live.Target, Limiter: o.Limiter, Limit: o.Limit, Workers: o.Workers, Total: o.Duration,
		Asserts: exprs, Controls: live.Engine, Quit: live.Quit, NoColor: noColor,
		Judge: func(s bench.Snapshot) []tui.AssertResult {
			results, _ := hammer.Judge(o.Assertions, bench.Summary{Limiter: s.Limiter, Limit: s.Limit, Strategies: s.Strategies})
			out := make([]tui.AssertResult, len(results))
			for i, r := range results {
				out[i] = tui.AssertResult{Expr: r.Expr, Known: r.Actual != nil, Passed: r.Passed, Actual: hammer.ActualText(r)}
			}
			return out
		},
	}
}

// writeHammerReport writes the self-contained HTML report of the run.
func writeHammerReport(path string, summary bench.Summary, rec *htmlreport.Recorder, results []bench.AssertionResult) error {
	asserts := make([]htmlreport.Assertion, len(results))
	for i, r := range results {
		asserts[i] = htmlreport.Assertion{Expr: r.Expr, Passed: r.Passed, Actual: hammer.ActualText(r)}
	}
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--report: %v", scriptcache.UnwrapPathError(err))
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
