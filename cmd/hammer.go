package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/bench"
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
	flags              hammer.Flags
	run                hammer.Options // resolved before runF
	tui, report, junit string
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
		Use:   "hammer [-f limiter.yaml] [flags]",
		Short: "Concurrent load that proves or disproves overshoot and refusals with room",
		Long: `Drives a limiter from many workers at once, several strategies side by side on
keys of their own, and proves what it finds: more admitted than the limit
(OVERSHOOT), a refusal while every correct limiter certainly had room (TOO
STRICT), a key left without a TTL (LEAKS); a correct atomic strategy is exact.
Without --url/--addr it starts a throw-away redis-server. Your script runs as
strategy custom (--script) by the contract you describe (-f keeps it); all but
exact exits 3; thin evidence loads on up to --max-duration. Topics: limitctl
help limiter-file, contract, evidence, http, records, exit-codes, connections.`,
		Example: `  limitctl hammer --strategies naive,lua --assert 'lua.overshoot==0'
  limitctl hammer --script ours.lua --junit hammer.xml
  limitctl hammer --script gcra.lua --script-args '{burst} {limit} {window_s}' \
    --print-limiter > limiter.yaml
  limitctl hammer -f limiter.yaml -o json`,
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
	fl.StringVarP(&opts.flags.LimiterFile, "limiter-file", "f", "", "read the limiter under test from `FILE` (YAML); flags given override it")
	fl.BoolVar(&opts.printLimiter, "print-limiter", false, "write the limiter file these flags state, and run nothing")
	fl.StringVar(&opts.flags.Kind, "limiter", string(limiter.Default), "the limiter `KIND`: "+human.Or(limiter.Names(limiter.Kinds())))
	fl.Int64Var(&opts.flags.Limit, "limit", 20, "the limit `N`: in flight, per window, or the bucket's burst")
	fl.DurationVar(&opts.flags.Window, "window", time.Second, "the window `D`; the token bucket refills --limit per D")
	fl.DurationVar(&opts.flags.Hold, "hold", 0, "`D` a request holds its slot (default 2ms), else a think time")
	fl.DurationVar(&opts.flags.StaleAfter, "stale-after", 0, "concurrency: a request is reclaimed `D` after its start")
	fl.StringArrayVar(&opts.flags.Assert, "assert", nil, "a threshold `EXPR` that must hold, e.g. 'lua.overshoot==0'")
	fl.StringVar(&opts.flags.Script.File, "script", "", "run your Lua script `FILE` as strategy custom")
	fl.StringVar(&opts.flags.Script.Keys, "script-keys", "", "the script's `KEYS` as a template (default: the shipped)")
	fl.StringVar(&opts.flags.Script.Args, "script-args", "", "the script's `ARGV` as a template (default: the shipped)")
	fl.StringVar(&opts.flags.Script.Allowed, "script-allowed", "", "`EXPR` over reply, true when admitted (reply[1] == 1)")
	fl.StringVar(&opts.flags.Script.AdmitAt, "script-admit-at", "", "`EXPR` over reply: when the caller may go, in epoch ms")
	fl.StringVar(&opts.flags.Script.Clock, "clock", "", "the script's `CLOCK`: client, virtual or server (by its contract)")
	fl.StringVar((*string)(&opts.flags.Script.WindowStart), "window-start", "", "fixed-window: where its windows `START`: any, first-hit or epoch")
	fl.StringVar(&opts.flags.Script.Release, "script-release", "", "concurrency: the release `COMMAND`, or none (ZREM {key} {member})")
	fl.StringVar(&opts.flags.Script.ReleaseFile, "script-release-file", "", "concurrency: the release as a script `FILE` of its own")
	fl.StringVar(&opts.flags.Script.ReleaseKeys, "script-release-keys", "", "the release script's `KEYS` as a template ({key})")
	fl.StringVar(&opts.flags.Script.ReleaseArgs, "script-release-args", "", "the release script's `ARGV` as a template ({member})")
	fl.Var(contract.SetupFlag{Flag: contract.FlagSetup, Lines: &opts.flags.Script.Setup}, "script-setup", "a `COMMAND` run on every key before the load (repeatable)")
	fl.Var(contract.SetupFlag{Flag: contract.FlagSetupFile, Lines: &opts.flags.Script.Setup}, "script-setup-file", "a script `LINE` 'F.lua KEY... , ARG...' run on every key first")
	fl.BoolVar(&opts.flags.NoLint, "no-lint", false, "run a --script even when lint finds errors")
	fl.StringSliceVar(&opts.flags.Strategies, "strategies", []string{"naive", "lua"}, "the `STRATEGIES` to run side by side: "+strings.Join(limiter.Names(limiter.Strategies()), ", "))
	fl.IntVar(&opts.flags.Workers, "workers", 64, "`N` concurrent workers per strategy")
	fl.DurationVar(&opts.flags.Duration, "duration", 10*time.Second, "how long to run (pauses excluded)")
	fl.Int64Var(&opts.flags.Requests, "requests", 0, "stop after `N` decisions per strategy, not after --duration")
	fl.DurationVar(&opts.flags.MaxDuration, "max-duration", 0, "load on while the evidence is too thin to judge, up to `D` (default 3×--duration)")
	fl.Int64Var(&opts.flags.MaxRequests, "max-requests", 0, "with --requests: load on while the evidence is thin, up to `N` (default 3×)")
	fl.Float64Var(&opts.flags.Rate, "rate", 0, "open loop: `R` decisions a second per strategy (default closed)")
	fl.IntVar(&opts.flags.Conns, "conns", 0, "`N` connections per strategy, calls pipelined (0: one a worker)")
	fl.IntVar(&opts.flags.Keys, "keys", 1, "`N` limiter keys per strategy, each its own hash tag")
	fl.StringVar(&opts.flags.Profile, "profile", "", "the load's `SHAPE`: steady, or bursty (the windows' and bucket's)")
	fl.DurationVar(&opts.flags.Skew, "skew", 0, "skew workers' clocks within ±`D` (default 5ms; bucket 1-5ms)")
	fl.Float64Var(&opts.flags.Abandon, "abandon", 0, "concurrency: the `SHARE` of admits never released (default: crashes)")
	fl.StringVar(&opts.flags.OnError, "on-error", "closed", "on a Redis error: `MODE` open admits, closed refuses (counted apart)")
	fl.StringArrayVar(&opts.flags.Inject, "inject", nil, "a fault `EVENT`: flush-scripts@2s, pause@3s:500ms, kill@4s, restart@5s")
	fl.StringVar(&opts.flags.Embedded, "embedded", "auto", "the server without a target: `KIND` auto, redis-server or memory")
	fl.StringVar(&opts.flags.RunID, "run-id", "", "share the keys with every process given this `ID`")
	fl.StringVar(&opts.flags.Witness, "witness", "local", "the evidence's `PLACE`: local, or redis (shared by a --run-id)")
	fl.Float64Var(&opts.flags.Timeline.MaxMiB, "evidence-max-mib", hammer.DefaultEvidenceMaxMiB, "a shared run: at most `MIB` of calls' evidence a process writes")
	fl.StringVar(&opts.tui, "tui", "auto", "the live dashboard: `WHEN` auto (on a terminal), on or off")
	fl.StringVar(&opts.report, "report", "", "write a self-contained HTML report to `FILE`")
	fl.StringVar(&opts.junit, "junit", "", "write a JUnit XML report to `FILE` for CI")
	fl.StringVar(&opts.flags.Record, "record", "", "write every call to `FILE`, a JSON line each, for limitctl judge")
	fl.StringVar(&opts.flags.Prefix, "prefix", "limitctl", "the run's keys' `PREFIX`")
	fl.BoolVar(&opts.flags.KeepKeys, "keep-keys", false, "leave the run's keys in Redis")
	fl.StringArrayVar(&opts.flags.Limiter.HTTP.Targets, "http", nil, "judge the endpoint at `[NAME=]URL` as a strategy (repeatable)")
	fl.StringVar(&opts.flags.Limiter.HTTP.Method, "http-method", "GET", "the HTTP targets' request `METHOD`")
	fl.StringArrayVar(&opts.flags.Limiter.HTTP.Headers, "http-header", nil, "a request `HEADER` 'Name: value' (repeatable)")
	fl.StringVar(&opts.flags.Limiter.HTTP.Body, "http-body", "", "the request `BODY`")
	fl.StringVar(&opts.flags.Limiter.HTTP.Admitted, "http-admitted", contract.DefaultHTTPAdmitted, "`EXPR` over status and header['Name'], true for an admit")
	fl.StringVar(&opts.flags.Limiter.HTTP.Refused, "http-refused", contract.DefaultHTTPRefused, "`EXPR` true for a refusal (else an error, never judged)")
	fl.StringArrayVar(&opts.flags.Limiter.HTTP.Keys, "http-keys", nil, "`[NAME=]PATTERN` of its limiter's keys in --url's Redis")
	fl.BoolVar(&opts.flags.RedisTrace, "http-redis-trace", false, "trace the commands the application sends to --url's Redis (MONITOR: it keeps ~0.7 of its throughput)")
	fl.StringVar(&opts.flags.RedisProxy, "http-redis-proxy", "", "trace them through a proxy at `ADDR` the application connects to")
	fl.BoolVar(&opts.flags.Demo, "http-demo", false, "judge a test application's naive and atomic routes, traced (needs nothing)")
	// For measuring and testing the tool itself, never in --help.
	fl.BoolVar(&opts.flags.NoTrace, "no-trace", false, "record no command of any decision (no first_overshoot): for measuring what the recording costs")
	fl.BoolVar(&opts.flags.NoDirect, "no-direct", false, "send the script strategies' calls through go-redis on a single node too: for measuring what the direct connections gain")
	fl.DurationVar(&opts.flags.Timeline.Shift, "clock-shift", 0, "move this process's clock by this much, as another host's would be: for testing a shared run's timeline")
	fl.DurationVar(&opts.flags.Timeline.ProbeDelay, "clock-probe-delay", 0, "slow each TIME round trip of the clock's measure by this much: for testing a bound too wide")
	fl.BoolVar(&opts.flags.Timeline.Off, "no-timeline", false, "publish none of a shared run's calls: for measuring what publishing costs")
	for _, name := range []string{"no-trace", "no-direct", "clock-shift", "clock-probe-delay", "no-timeline"} {
		_ = fl.MarkHidden(name)
	}
	c.SetUsageFunc(groupedUsage(hammerFlagGroups))
	c.AddCommand(newHammerReportCmd(f, nil))
	c.RegisterFlagCompletionFunc("limiter", fixedCompletion(limiter.Names(limiter.Kinds())...))
	c.RegisterFlagCompletionFunc("strategies", listCompletion(hammerStrategies))
	for name, values := range map[string][]string{"on-error": {"open", "closed"}, "tui": {"auto", "on", "off"}, "witness": {"local", "redis"},
		"embedded": {"auto", "redis-server", "memory"}, "clock": {"client", "virtual", "server"}} {
		c.RegisterFlagCompletionFunc(name, fixedCompletion(values...))
	}
	c.RegisterFlagCompletionFunc("script-release-file", luaFiles)
	c.RegisterFlagCompletionFunc("profile", fixedCompletion(limiter.ProfileSteady, limiter.ProfileBursty))
	c.RegisterFlagCompletionFunc("script", luaFiles)
	c.MarkFlagFilename("report", "html")
	c.MarkFlagFilename("limiter-file", "yaml", "yml")
	c.MarkFlagFilename("junit", "xml")
	return c
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
		// Five frames a second read as live, at a few milliseconds of rendering each.
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
	if f.IO.Process {
		deps.Procs = func(n int) func() {
			was := runtime.GOMAXPROCS(n)
			return func() { runtime.GOMAXPROCS(was) }
		}
	}
	if o.flags.HasTarget {
		deps.Connect = func(ctx context.Context, poolSize int) (redis.UniversalClient, bench.Target, error) {
			f.Conn.PoolSize, f.Conn.NoCheckoutProbe = poolSize, true
			client, t, err := f.Client(ctx)
			return client, bench.Target{Kind: t.Kind, Addr: t.Addr}, err
		}
	}
	if run.Conns > 0 && f.Getenv("GOGC") == "" {
		// The fast mode allocates ~500 bytes a decision: GC took 15-25% of its CPU (BenchmarkHotPath).
		// Four times the target collects a quarter as often for a few MiB of heap (a GOGC set stands).
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
	return finishHammer(f, format, "hammer", o.report, o.junit, started, res, recorder)
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
