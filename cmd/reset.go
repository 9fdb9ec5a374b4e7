package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
)

// reset only parses its flags and prints what internal/keys did (keys.ResetPatterns, which
// asks the confirmation a pattern needs). Its smallest ACL is in docs/acl.md, tested by
// TestACLResetMinimalRule.

type resetOptions struct {
	args  []string
	reset keys.ResetOptions
	yes   bool
	clock clockFlag
}

func newResetCmd(f *Factory, runF func(context.Context, *Factory, *resetOptions) error) *cobra.Command {
	if runF == nil {
		runF = runReset
	}
	opts := &resetOptions{}
	c := &cobra.Command{
		Use:   "reset KEY|PATTERN... [--dry-run] [--yes] [--force]",
		Short: "Delete a limiter's state, with every key that belongs to it, so the next request is as on a fresh key",
		Long: `Deletes the state of the given limiter keys as inspect recognises them, together with
the keys that hold the rest of the same limiter's state, so no library is left with half of it:
a bucket kept in two strings (...tokens and ...timestamp), a counter and its :timer, both
windows of a sliding pair (<id>:<n> and <id>:<n-1>, or {key} and {key}/-1), every held slot
of a lock (<name>1..<name>N). docs/kinds.md lists each layout. The next request is then decided
as on a fresh key: "let this customer through now".

A key of kind unknown is skipped (it may not be a limiter's at all) unless --force. Keys go
with UNLINK in batches of at most --batch keys per round trip, a limiter's keys always in one
batch and, where they share a slot, in one command, so no client sees half of them; Ctrl-C
stops between batches and reports what was deleted.

An argument with *, ? or [ is a pattern, matched with SCAN on every master; resetting by pattern
needs --yes, or a confirmation typed on a terminal. --dry-run reports what would be deleted and
deletes nothing: run it first.`,
		Example: `  limitctl inspect 'rl:*:user42*'
  limitctl reset 'rl:*:user42*' --dry-run
  limitctl reset 'rl:*:user42*' --yes
  limitctl reset request_rate_limiter.{user42}.tokens`,
		Args: minimumArgs(1, "one or more keys or patterns to reset"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.args = args
			if err := opts.validate(c, f); err != nil {
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&opts.reset.DryRun, "dry-run", false, "report what would be deleted; delete nothing")
	fl.BoolVarP(&opts.yes, "yes", "y", false, "reset keys matched by a pattern without asking (a --dry-run needs no confirmation)")
	fl.BoolVar(&opts.reset.Force, "force", false, "delete keys of kind unknown too")
	fl.IntVar(&opts.reset.Batch, "batch", keys.DefaultResetBatch, fmt.Sprintf("at most this many keys deleted per round trip (1-%d)", keys.MaxResetBatch))
	fl.Int64Var(&opts.reset.Count, "count", keys.DefaultScanCount, "SCAN COUNT hint: keyspace slots each SCAN call walks")
	opts.clock.bind(c, "reference time of kind detection")
	c.ValidArgsFunction = cobra.NoFileCompletions
	return c
}

func (o *resetOptions) validate(c *cobra.Command, f *Factory) error {
	r := &o.reset
	for _, check := range []func() error{r.Check, keys.SelectOptions{Count: r.Count}.Check, o.clock.validate} {
		if err := check(); err != nil {
			return err
		}
	}
	var err error
	r.Confirm, err = confirmPattern(c, f, o.args, o.yes || r.DryRun, "reset every limiter")
	return err
}

func runReset(ctx context.Context, f *Factory, o *resetOptions) error {
	format, rdb, clock, err := openLiveKeys(ctx, f, o.clock.clock)
	if err != nil {
		return err
	}
	o.reset.Clock = clock
	res, err := keys.ResetPatterns(ctx, rdb, o.args, o.reset)
	return printWrite(f, format, res, res.TotalDeleted > 0, err)
}
