package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
)

// purge writes only through the purge_stale script. Its smallest ACL is in docs/acl.md, tested
// by TestACLPurgeMinimalRule, TestPurgeACLs and, on a cluster, TestInspectAndPurgeOnACluster.

type purgeOptions struct {
	args     []string
	purge    keys.PurgeOptions
	batch    int
	yes      bool
	keyFlags scoreFlags
}

func newPurgeCmd(f *Factory, runF func(context.Context, *Factory, *purgeOptions) error) *cobra.Command {
	if runF == nil {
		runF = runPurge
	}
	opts := &purgeOptions{}
	c := &cobra.Command{
		Use:   "purge PATTERN|KEY... --older-than D [--dry-run] [--yes] [--batch N]",
		Short: "Remove sorted-set members older than D, in short bounded batches",
		Long: `Removes from each sorted set the members scored at or before now - D: the in-flight
entries whose release never came, the window-log entries nobody will read again.

Each call of the purge_stale script removes at most --batch members (a short, atomic step),
and calls repeat until nothing older than D is left, so Redis is never blocked. Keys that are
not sorted sets, and sets whose scores are not timestamps, are skipped with a reason. The
report gives the members removed and remaining per key and in total. Ctrl-C stops between
batches and reports what was done.

An argument with *, ? or [ is a pattern, matched with SCAN on every master; removing by pattern
needs --yes, or a confirmation typed on a terminal. --dry-run counts what would go and writes
nothing. Scores are read in --score-unit (auto: per set, the one unit in which its oldest,
newest and three sampled scores are all plausible times; a set whose scores mix units is
skipped); now is the server's TIME (--clock local: this machine's clock).

--scores says what a score is: start (when the member began: it goes once it is D old) or
deadline (when the member expires, now + a timeout, as job throttlers keep leases: it goes once
its deadline passed D ago). Either way a member goes when its score is at or before now - D, so
a member whose deadline is still ahead is never removed. auto (with --score-unit auto) reads
deadlines when most sampled scores lie in the future, and says so in the report.`,
		Example: `  limitctl purge 'rl:conc:*' --older-than 10m --dry-run
  limitctl purge 'rl:conc:*' --older-than 10m --yes
  limitctl purge rl:conc:user42 --older-than 30s --batch 500
  limitctl purge 'throttled:*:concurrency*' --scores deadline --older-than 1m --yes`,
		Args: minimumArgs(1, "one or more keys or patterns to purge"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.args = args
			if err := opts.validate(c, f); err != nil {
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.DurationVar(&opts.purge.OlderThan, "older-than", 0, "remove members at least this old, e.g. 10m (required)")
	fl.IntVar(&opts.batch, "batch", keys.DefaultBatch, fmt.Sprintf("at most this many members removed per script call (1-%d)", keys.MaxBatch))
	fl.BoolVar(&opts.purge.DryRun, "dry-run", false, "count what would be removed (ZCOUNT); write nothing")
	fl.BoolVarP(&opts.yes, "yes", "y", false, "purge keys matched by a pattern without asking (a --dry-run needs no confirmation)")
	fl.Int64Var(&opts.purge.Select.Count, "count", keys.DefaultScanCount, "SCAN COUNT hint: keyspace slots each SCAN call walks")
	opts.keyFlags.bind(c)
	c.ValidArgsFunction = cobra.NoFileCompletions // key names live in Redis
	return c
}

func (o *purgeOptions) validate(c *cobra.Command, f *Factory) error {
	p := &o.purge
	if !c.Flags().Changed("older-than") {
		return usagef("--older-than is required: purge removes members at least that old, e.g. --older-than 10m")
	}
	p.Batch = int64(o.batch)
	for _, check := range []func() error{p.Check, p.Select.Check, o.keyFlags.validate} {
		if err := check(); err != nil {
			return err
		}
	}
	p.Unit, p.Scores = o.keyFlags.unit, o.keyFlags.scores
	var err error
	p.Confirm, err = confirmPattern(c, f, o.args, o.yes || p.DryRun, "purge every key")
	return err
}

func runPurge(ctx context.Context, f *Factory, o *purgeOptions) error {
	format, rdb, clock, err := openLiveKeys(ctx, f, o.keyFlags.clock)
	if err != nil {
		return err
	}
	o.purge.Clock = clock
	res, err := keys.PurgePatterns(ctx, rdb, o.args, o.purge)
	return printWrite(f, format, res, res.TotalRemoved > 0, err)
}
