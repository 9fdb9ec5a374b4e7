package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/buildinfo"
	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/outfile"
	htmlreport "github.com/limitctl/limitctl/internal/report"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/internal/tui"
)

// hammerOptions are the hammer's flags: the run's as given (flags, which hammer.Flags.Resolve
// checks into run) and how its result is shown.
type hammerOptions struct {
	flags  hammer.Flags
	run    hammer.Options // resolved before runF
	tui    string
	report string
	junit  string
	// printLimiter: write the limiter file the flags state instead of running.
	printLimiter bool
}

// newHammerCmd binds the hammer's flags; runF runs the resolved options (runHammer, or a
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

Abandoned requests (concurrency): --abandon 0.002 (the default) never releases one admitted
request in 500, evenly spread over each worker's admits, as a client that crashed holding its
slot. Each holds its slot for stale-after, 500 holds at the defaults, so a correct limiter
holds about as many abandoned requests as live ones and the live load still contends it; more
would leave the live load few slots. A correct limiter reclaims a member stale-after past its
start (--stale-after, default 100 x hold rounded up to a whole second, at least 1s, so a 5s run
sees several reclaims, and at least two units of a script's clock when its contract tells it the
time or its stale time only in whole seconds or by a window's index: {now_s}, {now_s_int},
{stale_after_s}, {window_index} at --window 1s give 2s, so rounding to the second never drops a
running request); one still counting a member abandoned more than stale-after ago refuses with
room: TOO STRICT. A limiter that drops a request while it still runs (its count reads below the
requests held) lets others in beside it: OVERSHOOT, and the verdict says it dropped held requests. The shipped contract passes stale-after, a custom one through
{stale_after_ms} or {stale_after_s}; give --stale-after for a time fixed in a script's code. A
script told no stale time at all is taken for a plain semaphore: it abandons nothing unless
--abandon is given, and then its abandoned requests count as held for ever and no refusal is
blamed on them. --abandon 0 abandons none.

` + human.Wrap(`A script you already have runs as strategy custom with its own calling contract:
--script-keys and --script-args are templates of words (a "quoted word" may hold spaces; "" is
an empty one) with placeholders {`+strings.Join(contract.Placeholders(), "} {")+`}. A word
with {slot} repeats once per slot, 1 to --limit (a key per slot); {reply}, in --script-release
only, is the acquire's reply (the slot taken). --script-allowed is a Lua expression over reply
(integer -> number, bulk -> string, array -> table, nil -> false) and may use the run's fixed
values, e.g. 'reply[1] <= {limit}', and the call's time, e.g. 'reply <= {now_ms}' (refusals are
then not judged: a refused call may hold a later slot). --script-admit-at EXPR is for a limiter
that answers when the caller may go (a schedule): a Lua expression over reply giving that time
in the run's epoch milliseconds, e.g. 'reply' or 'tonumber(reply[2])'; each admit counts at that
time, its worker waits until then (at most 2s), and --script-allowed defaults to true (every reply
a slot). Not for concurrency, nor with --skew (its times are on its callers' clocks); its
refusals are not judged (slots handed out for later make a refusal right). Arithmetic inside one placeholder is evaluated per call:
{now_ms + window_ms}, {limit - 1}, {rate_per_s / 1000000} (+ - * / and parentheses).
--script-keys '' calls the script with no KEYS (its keys passed in ARGV, still from {key}).
--script-setup 'SET {key} {limit} NX' and --script-setup-file 'init.lua {key} , {limit}'
(redis-cli --eval's syntax) create the state the script works on, as a library's own first
call does (Redisson's trySetPermits, Bottleneck's init): run in the order given on every key of
the run before its load, writing under {key}, so the clean-up deletes it; a step Redis refuses
stops the run before any load (exit 1).
--script-release-file F.lua makes the release a script of its own, called with
--script-release-keys and --script-release-args (default '{key}' and '{member}'). A script
given no {now_*} time that reads TIME runs on the virtual clock: the hammer answers its TIME
with each call's own time, never going back per key (a mark beside the key), so it is judged
as exactly as one passed its time (--clock server runs it on the server's clock instead: its
evidence then counts only admits certainly inside one window, by when each call was sent and
answered). A fixed window is judged epoch-aligned
only when the contract names its window ({window_index}, {prev_window_index},
{window_start_ms}); otherwise a window opened by its first hit is no overshoot. Without an
--assert on custom.overshoot the run checks custom.overshoot==0 itself: an overshoot, or a
limit never reached (no refusal seen, nor the limit held at once), exits 3; without one on
custom.false_rejects, custom.false_rejects==0: a refusal with room exits 3 (TOO STRICT);
without one on custom.leaks, custom.leaks==0: before the clean-up the hammer reads every key
of the run, and one left without a TTL, or with one beyond max(1h, 100 windows or
stale-afters), exits 3 (LEAKS; --assert 'custom.leaks>=0' accepts a permanent configuration
key). Where the allowances (skew, lateness, the server's clock) left no more admits judged than
the limit, or the evidence saw nothing while the limiter refused, the verdict is 'not judged'
and the implied overshoot check fails.`, 92) + `

For the window and bucket limiters the default load is bursty (two windows of load, then idle
spells of 1.1 to 2.2 windows, so refill and expiry bugs show), and every limiter's workers'
clocks are skewed (up to 5ms; the token bucket's by a 50th of a token's refill time, 1 to 5ms),
so requests reach Redis out of their time order; --profile steady --skew 0 gives plain load for
throughput numbers.

Connections: by default every worker has a connection of its own with one call in flight, so
the latency printed is one round trip and nothing else: the truest latency, but one process
cannot push a Redis to its limit that way. On a single node the script strategies' calls are
written to those connections directly (the EVALSHA encoded and its reply read without a client
library, set up as go-redis sets up its own: TLS, AUTH as the ACL user, SELECT, RESP2/3;
NOSCRIPT recovered as always), so the client costs the machine about what redis-benchmark does;
on a cluster (which must follow MOVED and ASK) and on a master found through Sentinels they go
through rueidis, one DoMulti a round. --conns N is the fast mode: each strategy's workers
share N connections, and for the script strategies (lua, eval, function, lua-ts-member, custom)
each connection runs its workers in rounds, every ready worker's call of a round sent as one
pipeline, which is how a server reaches its throughput (as redis-benchmark -P does). Every
decision keeps its own evidence (overshoot and refusals with room), stamped on the run's one
clock from before its round was sent until after its round's last reply was read. Its latency is that of its round: from the
round's sending (or, with --rate, the call's scheduled start) until the round's last reply,
so it includes the other calls' turns in the pipeline; it is not one round trip. Use the
default to measure latency, --conns (e.g. --workers 256 --conns 8; on a cluster --workers 800
--conns 8, as many calls in flight as redis-benchmark -c 50 -P 16) to measure what the server
can take. On a cluster a round's acquires go to the keys of one master, the next round's to
the next master's (a round costs the client one write and one read however many masters there
are; a concurrency limiter's releases go to their own keys' masters): with --keys over the
masters (each key its own hash tag), --conns at least the number of masters keeps every one
of them busy. naive's single commands are pipelined over the N connections as they come;
watch and multi hold a connection per transaction, so their workers share the N without
pipelining.

Exit codes: 0 passed, 1 runtime error, 2 bad usage, 3 a check failed (an assertion, a verdict),
4 lint refused the --script before any load (the message names the rules and lines: fix them,
put '-- limitctl:ignore RULE' on the line above, or pass --no-lint), 130 interrupted.

For CI: --junit F.xml writes a JUnit report (a test case per assertion and per strategy's
verdict, failing exactly when the run exits 3), and when GITHUB_STEP_SUMMARY is set (GitHub
Actions) a Markdown summary of the verdicts and assertions is appended to that file.

Assertions (k6-style; a failed one exits 3): strategy.metric OP value, with OP one of
== != < <= > >=; latency takes units (lua.p99<5ms, a bare number is milliseconds). Metrics:
` + human.Wrap(strings.Join(verdict.MetricNames(), ", "), 92),
		Example: `  limitctl hammer
  limitctl hammer --strategies naive,lua --duration 5s --assert 'lua.overshoot==0' --assert 'naive.overshoot>0'
  limitctl hammer --limiter sliding-window --limit 100 --window 1s --strategies watch,lua,function
  limitctl hammer --script ours.lua --assert 'custom.overshoot==0' -o json
  limitctl hammer --script ours.lua --junit hammer.xml   # for Jenkins, GitLab, CircleCI
  limitctl hammer --limiter token-bucket --script gcra.lua --script-args '{burst} {limit} {window_s} {cost}' --script-allowed 'reply[1] > 0'`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := opts.resolve(c, f); err != nil {
				return err
			}
			if opts.printLimiter {
				file, err := opts.run.LimiterFile()
				if err == nil {
					_, err = f.IO.Out.Write(file)
				}
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&opts.flags.LimiterFile, "limiter-file", "f", "", "read the limiter under test from this YAML file; flags given override its fields (limitctl help limiter-file)")
	fl.BoolVar(&opts.printLimiter, "print-limiter", false, "write the limiter file these flags state, and run nothing")
	fl.StringVar(&opts.flags.Kind, "limiter", string(limiter.Concurrency), "limiter: "+human.Or(limiter.Names(limiter.Kinds())))
	fl.StringSliceVar(&opts.flags.Strategies, "strategies", []string{"naive", "lua"}, "strategies to run side by side: naive, multi, watch, lua, eval, function, lua-ts-member, custom")
	fl.IntVar(&opts.flags.Workers, "workers", 64, "concurrent workers per strategy")
	fl.Int64Var(&opts.flags.Limit, "limit", 20, "the limit: in-flight requests, requests per window, or the bucket's burst")
	fl.DurationVar(&opts.flags.Duration, "duration", 10*time.Second, "how long to run (pauses excluded)")
	fl.Int64Var(&opts.flags.Requests, "requests", 0, "stop after this many decisions per strategy instead of after --duration")
	fl.DurationVar(&opts.flags.Hold, "hold", 0, "concurrency: how long an admitted request holds its slot (default 2ms); window and bucket limiters: a think time after each admit (default 0)")
	fl.DurationVar(&opts.flags.Window, "window", time.Second, "window of the window limiters; the token bucket refills --limit per window")
	fl.DurationVar(&opts.flags.StaleAfter, "stale-after", 0, "concurrency: members older than this are reclaimed as abandoned; at least 1ms and longer than --hold (default 100 x hold rounded up to a whole second, at least 1s, and at least two units of a whole-second script clock)")
	fl.Float64Var(&opts.flags.Abandon, "abandon", 0, "concurrency: the share of admitted requests never released, as by a crashed client, 0 (none) up to 0.5 (default 0.002)")
	fl.Float64Var(&opts.flags.Rate, "rate", 0, "open loop: decisions per second per strategy, latency timed from each scheduled start (default: closed loop)")
	fl.IntVar(&opts.flags.Conns, "conns", 0, "connections per strategy, shared by its workers with their calls pipelined (default 0: one per worker; see Details below)")
	fl.IntVar(&opts.flags.Keys, "keys", 1, "limiter keys per strategy (spread over cluster slots by hash tags)")
	fl.StringVar(&opts.flags.Script.File, "script", "", "a Lua script to run as strategy custom (its contract: --script-keys, --script-args, --script-allowed; default the limiter's shipped one)")
	fl.BoolVar(&opts.flags.NoLint, "no-lint", false, "run a --script even when lint finds errors")
	fl.StringVar(&opts.flags.Script.Keys, "script-keys", "", "the script's KEYS as a template, e.g. '{key}:{window_index} {key}:{prev_window_index}' (default: the limiter's shipped contract)")
	fl.StringVar(&opts.flags.Script.Args, "script-args", "", "the script's ARGV as a template, e.g. '{limit} {now_ms} {window_ms} \"\"' (default: the limiter's shipped contract)")
	fl.StringVar(&opts.flags.Script.Allowed, "script-allowed", "", "Lua expression over reply, true when admitted, e.g. 'reply == 0' (default: reply[1] == 1)")
	fl.StringVar(&opts.flags.Script.AdmitAt, "script-admit-at", "", "a schedule: Lua expression over reply giving when the caller may go, in epoch ms, e.g. 'tonumber(reply[2])' (each admit counts at that time)")
	fl.StringVar(&opts.flags.Script.Release, "script-release", "", "concurrency: the release as a command template, or none (default: ZREM {key} {member})")
	fl.StringVar(&opts.flags.Script.ReleaseFile, "script-release-file", "", "concurrency: the release as a script of its own, called with --script-release-keys and --script-release-args")
	fl.StringVar(&opts.flags.Script.ReleaseKeys, "script-release-keys", "", "the release script's KEYS as a template; {reply} is the acquire's reply (default: {key})")
	fl.StringVar(&opts.flags.Script.ReleaseArgs, "script-release-args", "", "the release script's ARGV as a template (default: {member})")
	fl.Var(setupFlag{contract.FlagSetup, &opts.flags.Script.Setup}, "script-setup", "a command run on every key of the run before its load, as a template, e.g. 'SET {key} {limit} NX' (repeatable; with --script-setup-file, in the order given)")
	fl.Var(setupFlag{contract.FlagSetupFile, &opts.flags.Script.Setup}, "script-setup-file", "a script run on every key of the run before its load, in redis-cli --eval's syntax with placeholders: 'init.lua {key} , {limit}' (repeatable)")
	fl.StringVar(&opts.flags.Script.Clock, "clock", "", "whose clock the script uses: client (passed as {now_*}), virtual (it reads TIME, which the hammer answers with each call's own time, never going back per key) or server (it reads the server's TIME) (default: client when a {now_*} or window placeholder is passed, else virtual when the script reads TIME, else server)")
	fl.StringVar(&opts.flags.Profile, "profile", "", "load shape: steady, or bursty (idle spells of 1.1 to 2.2 windows after 2 windows of load, so refill and expiry bugs surface) (default bursty for the window and bucket limiters, steady for concurrency)")
	fl.BoolVar(&opts.flags.NoTrace, "no-trace", false, "record no command of any decision (no first_overshoot): for measuring what the recording costs")
	_ = fl.MarkHidden("no-trace")
	fl.BoolVar(&opts.flags.NoDirect, "no-direct", false, "send the script strategies' calls through go-redis on a single node too: for measuring what the direct connections gain")
	_ = fl.MarkHidden("no-direct")
	fl.DurationVar(&opts.flags.Timeline.Shift, "clock-shift", 0, "move this process's clock by this much, as another host's would be: for testing a shared run's timeline")
	fl.DurationVar(&opts.flags.Timeline.ProbeDelay, "clock-probe-delay", 0, "slow each TIME round trip of the clock's measure by this much: for testing a bound too wide")
	fl.BoolVar(&opts.flags.Timeline.Off, "no-timeline", false, "publish none of a shared run's calls: for measuring what publishing costs")
	fl.Float64Var(&opts.flags.Timeline.MaxMiB, "evidence-max-mib", hammer.DefaultEvidenceMaxMiB, "a shared run (--run-id, --witness redis): the most of its calls' evidence one process writes to Redis, about 12 bytes a decision; past it, its later refusals are not judged (0: no bound)")
	for _, name := range []string{"clock-shift", "clock-probe-delay", "no-timeline"} {
		_ = fl.MarkHidden(name)
	}
	fl.DurationVar(&opts.flags.Skew, "skew", 0, "offset each worker's clock by a fixed amount within ±skew, as app servers' clocks disagree (default 5ms; the token bucket's 1-5ms, a 50th of a token's refill time)")
	fl.StringVar(&opts.flags.Witness, "witness", "local", "evidence: local (in-process) or redis (shared by the hammer processes of one --run-id: the concurrency witness, and the windows' and buckets' admitted times)")
	fl.StringArrayVar(&opts.flags.Assert, "assert", nil, "threshold that must hold, e.g. 'lua.overshoot==0' (repeatable; exit 3 if one fails)")
	fl.StringVar(&opts.flags.OnError, "on-error", "closed", "when Redis errors or times out: open (admit) or closed (reject); counted apart")
	fl.StringVar(&opts.tui, "tui", "auto", "live dashboard: auto (when stdin and stdout are terminals), on, off")
	fl.StringVar(&opts.report, "report", "", "write a self-contained HTML report to this file")
	fl.StringVar(&opts.junit, "junit", "", "write a JUnit XML report to this file for CI (a test case per assertion and per strategy's verdict)")
	fl.StringVar(&opts.flags.Prefix, "prefix", "limitctl", "key prefix")
	fl.StringVar(&opts.flags.RunID, "run-id", "", "share keys with other hammer processes that pass the same id (default: random); with --witness redis they prove overshoot together; only the last of them to finish deletes the keys")
	fl.BoolVar(&opts.flags.KeepKeys, "keep-keys", false, "leave the run's keys in Redis")
	fl.StringVar(&opts.flags.Embedded, "embedded", "auto", "server without --url/--addr: auto, redis-server or memory (in-process)")
	fl.StringArrayVar(&opts.flags.Inject, "inject", nil, "fault events: flush-scripts@2s, pause@3s:500ms, kill@4s, restart@5s (kill/restart on the spawned server)")
	c.AddCommand(newHammerReportCmd(f, nil))
	c.RegisterFlagCompletionFunc("limiter", fixedCompletion(limiter.Names(limiter.Kinds())...))
	c.RegisterFlagCompletionFunc("strategies", listCompletion(hammerStrategies))
	c.RegisterFlagCompletionFunc("on-error", fixedCompletion("open", "closed"))
	c.RegisterFlagCompletionFunc("tui", fixedCompletion("auto", "on", "off"))
	c.RegisterFlagCompletionFunc("witness", fixedCompletion("local", "redis"))
	c.RegisterFlagCompletionFunc("embedded", fixedCompletion("auto", "redis-server", "memory"))
	c.RegisterFlagCompletionFunc("clock", fixedCompletion("client", "virtual", "server"))
	c.RegisterFlagCompletionFunc("script-release-file", luaFiles)
	c.RegisterFlagCompletionFunc("profile", fixedCompletion(bench.ProfileSteady, bench.ProfileBursty))
	c.RegisterFlagCompletionFunc("script", luaFiles)
	c.MarkFlagFilename("report", "html")
	c.MarkFlagFilename("limiter-file", "yaml", "yml")
	c.MarkFlagFilename("junit", "xml")
	return c
}

// setupFlag appends each value of --script-setup or --script-setup-file to one list, so the
// set-up steps run in the order they were given across both flags.
type setupFlag struct {
	flag  string
	lines *[]contract.SetupLine
}

func (v setupFlag) String() string { return "" }
func (v setupFlag) Type() string {
	if v.flag == contract.FlagSetupFile {
		return "line"
	}
	return "command"
}
func (v setupFlag) Set(text string) error {
	*v.lines = append(*v.lines, contract.SetupLine{Flag: v.flag, Text: text})
	return nil
}

// resolve checks every flag before anything connects or sends load: the run's (hammer.Flags)
// and the outputs' (the dashboard, the report and JUnit files, checked writable but not created).
func (o *hammerOptions) resolve(c *cobra.Command, f *Factory) error {
	o.flags.Given = c.Flags().Changed
	o.flags.HasTarget = f.Conn.HasTarget() || f.Getenv("REDIS_URL") != ""
	var err error
	if o.run, err = o.flags.Resolve(); err != nil {
		return err
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
	return cmp.Or(outfile.CheckFlag("--report", o.report), outfile.CheckFlag("--junit", o.junit)) // --report's error first
}

// runHammer runs the session with the live view the streams call for, then prints its result.
func runHammer(ctx context.Context, f *Factory, o *hammerOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	run := o.run
	dashboard := o.tui == "on" || (o.tui == "auto" && f.IO.StdinTTY && f.IO.StdoutTTY && format != tableprint.FormatJSON)
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
				err = tui.Run(ctx, hammer.DashboardOptions(run, live, f.IO.ColorProfile()), view, f.IO.In, f.IO.Terminal())
			} else {
				err = tui.Progress(f.IO.ErrOut, view)
			}
			for range view { // after q the dashboard stops reading; let the recorder see the rest
			}
			return err
		},
	}
	if o.flags.HasTarget {
		deps.Connect = func(ctx context.Context, poolSize int) (redis.UniversalClient, bench.Target, error) {
			f.Conn.PoolSize, f.Conn.NoCheckoutProbe = poolSize, true
			client, t, err := f.Client(ctx)
			return client, bench.Target{Kind: t.Kind, Addr: t.Addr}, err
		}
	}
	if run.Conns > 0 && f.Getenv("GOGC") == "" {
		// The fast mode's client allocates ~500 bytes a decision: at the default target it
		// collects about 145 times per million decisions, 15-25% of its CPU (BenchmarkHotPath),
		// which a server on the same machine would otherwise get. Four times the target collects
		// a quarter as often for a few MiB more of heap (a GOGC the user set stands).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	started := f.Now()
	res, err := hammer.Run(ctx, run, deps)
	if err != nil {
		return checkOutcome(f, err, writeHammerCI(f, "hammer", o.junit, started, res, err))
	}
	if res.KeysKept != "" {
		fmt.Fprintf(f.IO.ErrOut, "keys kept under %s\n", res.KeysKept)
	}
	if err := writeHammerSummary(f, format, res); err != nil {
		if res.Interrupted {
			// The terminal went with the signal (SIGHUP): the run's ending is the exit code.
			return res.Err()
		}
		return err
	}
	if recorder != nil {
		if err := htmlreport.WriteRun(o.report, res, recorder, f.Now()); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "report written to %s\n", o.report)
	}
	return checkOutcome(f, res.Err(), writeHammerCI(f, "hammer", o.junit, started, res, nil))
}

// writeHammerCI writes what CI reads of a hammer run or hammer report's merged run
// (ciformat.HammerReports): the JUnit report at junit, and the Markdown section of
// $GITHUB_STEP_SUMMARY. Bad input writes nothing.
func writeHammerCI(f *Factory, command, junit string, started time.Time, res hammer.Result, runErr error) error {
	failed := false
	if runErr != nil {
		code, msg := classify(runErr, f.secrets())
		if code == ExitUsage {
			return nil // nothing ran, as with a flag refused before the run
		}
		runErr, failed = errors.New(msg), code == ExitCheckFailed || code == ExitLintRefused
	}
	report, summary, err := ciformat.HammerReports(command, res, runErr, failed, started, f.Now().Sub(started), buildinfo.Resolve(f.Build).Version)
	return writeCI(f, ciformat.Files{JUnit: junit, StepSummary: f.Getenv("GITHUB_STEP_SUMMARY")}, report, summary, err)
}
