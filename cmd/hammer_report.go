package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/outfile"
)

type hammerReportOptions struct {
	runID   string
	prefix  string
	asserts []string
	junit   string
}

// newHammerReportCmd merges what every process of one run left in Redis.
func newHammerReportCmd(f *Factory, runF func(context.Context, *Factory, *hammerReportOptions) error) *cobra.Command {
	if runF == nil {
		runF = runHammerReport
	}
	opts := &hammerReportOptions{}
	c := &cobra.Command{
		Use:   "report --run-id ID",
		Short: "Merged summary of every hammer process that ran with --run-id ID --witness redis",
		Long: `Each hammer process run with --run-id ID --witness redis leaves its summary in Redis
for 24h; this merges them (counts summed, latencies from the merged histograms, peak and
overshoot joint) and judges the merged run as hammer judges one: the processes' assertions
(--assert here replaces them), the checks of a --script run, refusals over every process's
calls on the server's clock. A failed check exits 3; --junit and GITHUB_STEP_SUMMARY as
hammer's. Run the processes with --keep-keys. Topics: limitctl help evidence, exit-codes;
docs/many-processes.md.`,
		Example: `  limitctl hammer report --run-id nightly-42 -o json
  limitctl hammer report --run-id nightly-42 --assert 'lua.overshoot==0' --assert 'naive.overshoot>0'
  limitctl hammer report --run-id nightly-42 --junit report.xml   # for Jenkins, GitLab, CircleCI`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if !hammer.ValidRunID(opts.runID) {
				return usagef("--run-id must be 1-64 letters, digits, '-' or '_', got %q", opts.runID)
			}
			if err := outfile.CheckFlag("--junit", opts.junit); err != nil {
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	c.Flags().StringVar(&opts.runID, "run-id", "", "the run id the hammer processes shared (required)")
	c.Flags().StringVar(&opts.prefix, "prefix", "limitctl", "key prefix the processes used")
	c.Flags().StringArrayVar(&opts.asserts, "assert", nil, "threshold the merged summary must meet, in place of the processes' own, e.g. 'lua.overshoot==0' (exit 3 if one fails)")
	c.Flags().StringVar(&opts.junit, "junit", "", "write a JUnit XML report of the merged run to this file for CI (a test case per assertion and per strategy's verdict)")
	c.MarkFlagFilename("junit", "xml")
	return c
}

func runHammerReport(ctx context.Context, f *Factory, o *hammerReportOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	started := f.Now()
	rdb, _, err := f.Client(ctx)
	var res hammer.Result
	if err == nil {
		res, err = hammer.Report(ctx, rdb, o.prefix, o.runID, o.asserts)
	}
	if err != nil {
		return checkOutcome(f, err, writeHammerCI(f, "hammer report", o.junit, started, res, err))
	}
	return finishHammer(f, format, "hammer report", "", o.junit, started, res, nil)
}
