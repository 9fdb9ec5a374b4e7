package cmd

import (
	"cmp"
	"context"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/outfile"
)

type judgeOptions struct {
	flags         judge.Flags
	run           judge.Options // resolved before runF
	report, junit string
}

// newJudgeCmd judges the records a load tool already made.
func newJudgeCmd(f *Factory, runF func(context.Context, *Factory, *judgeOptions) error) *cobra.Command {
	if runF == nil {
		runF = runJudge
	}
	opts := &judgeOptions{}
	c := &cobra.Command{
		Use:   "judge FILE... [-f limiter.yaml | --limiter KIND --limit N --window D]",
		Short: "Judge what a load tool recorded (vegeta, k6, hammer --record) as hammer judges",
		Long: `Reads each request vegeta, k6 or hammer --record recorded and judges it as hammer --http
judges an endpoint: a verdict line per key group with its power and the records behind its
first overshoot, exit 3 when something is proven wrong; a record whose start or end is unknown
is not judged, never guessed. Topics: limitctl help records, evidence, exit-codes.`,
		Example: `  vegeta attack -rate 0 -max-workers 32 -duration 10s -targets t.txt | vegeta encode > r.json
  limitctl judge r.json --limiter fixed-window --limit 100 --window 1s --key-by url
  limitctl hammer --script ours.lua --record run.jsonl; limitctl judge run.jsonl --limit 15`,
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
	fl.StringVarP(&opts.flags.LimiterFile, "limiter-file", "f", "", "read the limiter from `FILE` (YAML, as hammer -f); flags override it")
	fl.StringVar(&opts.flags.Kind, "limiter", "", "the limiter judged against: "+human.Or(limiter.Names(limiter.Kinds())))
	fl.Int64Var(&opts.flags.Limit, "limit", 0, "the limit: per window, held at once, or the bucket's burst")
	fl.DurationVar(&opts.flags.Window, "window", 0, "the window; the token bucket refills --limit per window")
	fl.DurationVar(&opts.flags.Hold, "hold", 0, "concurrency behind HTTP: how long an admit holds its slot")
	fl.StringVar(&opts.flags.Format, "format", "", "vegeta, k6 or limitctl (default: from each file's content)")
	fl.StringVar(&opts.flags.KeyBy, "key-by", "none", "judge each key apart: url, header:NAME or none")
	fl.StringVar(&opts.flags.Admitted, "admitted", "", "an admit, as --http-admitted (status >= 200 and status < 300)")
	fl.StringVar(&opts.flags.Refused, "refused", "", "a refusal, as --http-refused (status == 429)")
	fl.BoolVar(&opts.flags.SkipBad, "skip-bad", false, "count a malformed line and read on (default: exit 2)")
	fl.StringVar(&opts.report, "report", "", "write a self-contained HTML report to `FILE`")
	fl.StringVar(&opts.junit, "junit", "", "write a JUnit XML report to `FILE` for CI")
	c.RegisterFlagCompletionFunc("limiter", fixedCompletion(limiter.Names(limiter.Kinds())...))
	return c
}

func runJudge(ctx context.Context, f *Factory, o *judgeOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	o.run.Stdin = f.IO.In
	started := f.Now()
	res, err := judge.Run(ctx, o.run)
	if err != nil {
		return checkOutcome(f, err, writeHammerCI(f, "judge", o.junit, started, res, err))
	}
	return finishHammer(f, format, "judge", o.report, o.junit, started, res, nil)
}
