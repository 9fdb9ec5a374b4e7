package cmd

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/outfile"
	htmlreport "github.com/limitctl/limitctl/internal/report"
)

type judgeOptions struct {
	flags  judge.Flags
	run    judge.Options // resolved before runF
	report string
	junit  string
}

// newJudgeCmd judges the records a load tool already made.
func newJudgeCmd(f *Factory, runF func(context.Context, *Factory, *judgeOptions) error) *cobra.Command {
	if runF == nil {
		runF = runJudge
	}
	opts := &judgeOptions{}
	c := &cobra.Command{
		Use:   "judge FILE... --limiter KIND --limit N --window D",
		Short: "Judge the records a load tool already made (vegeta, k6, hammer --record) as hammer judges its own",
		Long: `Reads what a load tool recorded of each request (vegeta encode --to json or --to csv, k6 run
--out json=F, hammer --record F; the format is recognised from the content) and judges it as
hammer --http judges an endpoint: each request was decided somewhere between its start and its end,
so only admits certainly inside one window (or, for --limiter concurrency with --hold D, certainly
holding their slots at one instant) prove an overshoot. A record whose start or end is unknown, or
out of time order, is counted as not judged, never guessed. Files are merged in time order.

Each key group (--key-by url|header:NAME, default none: one limiter key) gets the verdict line
hammer prints, with its power and the records behind its first overshoot by file and line. A
hammer --record file is judged again by the rules of its run (its limiter, unless given here:
judge it at another --limit to ask whether it would hold there), refusals included (every call
named a key of that run only); other tools' refusals are not judged, since the limiter's state
before the run is unknown. -o json, --junit and --report as hammer's.

Exit codes: 0 nothing proven wrong, 2 bad usage or a malformed line (--skip-bad counts it
instead), 3 an overshoot or a refusal with room proven, 1 a file that cannot be read.`,
		Example: `  vegeta attack -rate 0 -max-workers 32 -duration 10s -targets t.txt | vegeta encode --to json > results.json
  limitctl judge results.json --limiter fixed-window --limit 100 --window 1s
  limitctl judge k6.json --limiter concurrency --limit 20 --hold 50ms --key-by url
  limitctl hammer --script ours.lua --record run.jsonl && limitctl judge run.jsonl --limit 15`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.flags.Files, opts.flags.Given = args, c.Flags().Changed
			var err error
			if opts.run, err = opts.flags.Resolve(); err != nil {
				return err
			}
			if err := cmp.Or(outfile.CheckFlag("--report", opts.report), outfile.CheckFlag("--junit", opts.junit)); err != nil {
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&opts.flags.LimiterFile, "limiter-file", "f", "", "read the limiter from `FILE` (YAML, as hammer -f); flags given override it")
	fl.StringVar(&opts.flags.Kind, "limiter", "", "the limiter the records are judged against: "+human.Or(limiter.Names(limiter.Kinds())))
	fl.Int64Var(&opts.flags.Limit, "limit", 0, "the limit: requests per window, in flight at once, or the bucket's burst")
	fl.DurationVar(&opts.flags.Window, "window", 0, "the window of the window limiters; the token bucket refills --limit per window")
	fl.DurationVar(&opts.flags.Hold, "hold", 0, "concurrency behind HTTP: how long the endpoint holds an admitted request's slot before it answers")
	fl.StringVar(&opts.flags.Format, "format", "", "vegeta, k6 or limitctl (default: recognised from each file's content)")
	fl.StringVar(&opts.flags.KeyBy, "key-by", "none", "split the records into limiter keys: url, header:NAME (a response header's value) or none")
	fl.StringVar(&opts.flags.Admitted, "admitted", "", "Lua expression over status and header, true for an admit, as --http-admitted (default status >= 200 and status < 300)")
	fl.StringVar(&opts.flags.Refused, "refused", "", "Lua expression over status and header, true for a refusal, as --http-refused (default status == 429)")
	fl.BoolVar(&opts.flags.SkipBad, "skip-bad", false, "count a malformed line and read on (default: exit 2 naming its file and line)")
	fl.StringVar(&opts.report, "report", "", "write a self-contained HTML report to this file")
	fl.StringVar(&opts.junit, "junit", "", "write a JUnit XML report to this file for CI (a test case per key group's verdict)")
	c.RegisterFlagCompletionFunc("limiter", fixedCompletion(limiter.Names(limiter.Kinds())...))
	c.RegisterFlagCompletionFunc("format", fixedCompletion(limiter.Names(history.Formats)...))
	c.MarkFlagFilename("limiter-file", "yaml", "yml")
	c.MarkFlagFilename("report", "html")
	c.MarkFlagFilename("junit", "xml")
	return c
}

func runJudge(ctx context.Context, f *Factory, o *judgeOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	if len(o.run.Files) == 1 && o.run.Files[0] == "-" {
		o.run.Inputs = []history.Input{{Name: "standard input", R: io.Reader(f.IO.In)}}
	}
	started := f.Now()
	res, err := judge.Run(ctx, o.run)
	if err != nil {
		return checkOutcome(f, err, writeHammerCI(f, "judge", o.junit, started, res, err))
	}
	if err := writeHammerSummary(f, format, res); err != nil {
		return err
	}
	if o.report != "" {
		if err := htmlreport.WriteRun(o.report, res, htmlreport.NewRecorder(htmlreport.DefaultMaxPoints), f.Now()); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
		fmt.Fprintf(f.IO.ErrOut, "report written to %s\n", o.report)
	}
	return checkOutcome(f, judgeErr(res), writeHammerCI(f, "judge", o.junit, started, res, nil))
}

// judgeErr is the judging's outcome as an error with its exit code: a verdict that proves the
// limiter wrong exits 3, an interrupt 130.
func judgeErr(res hammer.Result) error {
	if res.Interrupted {
		return interruptedError("judge stopped; what was read is judged above")
	}
	return res.Err()
}
