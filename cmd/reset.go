package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// reset only parses its flags, asks when a pattern needs it, and prints what internal/keys did.
// Its smallest ACL is in docs/acl.md, tested by TestACLResetMinimalRule.

type resetOptions struct {
	args   []string
	dryRun bool
	yes    bool
	force  bool
	batch  int
	count  int64
	clock  keyClockFlag
}

func newResetCmd(f *Factory) *cobra.Command {
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
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{Msg: "want one or more keys or patterns to reset", Command: c.CommandPath()}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.args = args
			if err := opts.validate(f); err != nil {
				return err
			}
			return runReset(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&opts.dryRun, "dry-run", false, "report what would be deleted; delete nothing")
	fl.BoolVarP(&opts.yes, "yes", "y", false, "reset keys matched by a pattern without asking (a --dry-run needs no confirmation)")
	fl.BoolVar(&opts.force, "force", false, "delete keys of kind unknown too")
	fl.IntVar(&opts.batch, "batch", keys.DefaultResetBatch, fmt.Sprintf("at most this many keys deleted per round trip (1-%d)", keys.MaxResetBatch))
	fl.Int64Var(&opts.count, "count", keys.DefaultScanCount, "SCAN COUNT hint: keyspace slots each SCAN call walks")
	fl.StringVar(&opts.clock.name, "clock", "server", "reference time of kind detection: server (its TIME) or local (this machine's clock)")
	c.ValidArgsFunction = cobra.NoFileCompletions
	c.RegisterFlagCompletionFunc("clock", fixedCompletion(clockNames...))
	return c
}

func (o *resetOptions) validate(f *Factory) error {
	if o.batch < 1 || o.batch > keys.MaxResetBatch {
		return usagef("--batch must be 1 to %d (keys per round trip), got %d", keys.MaxResetBatch, o.batch)
	}
	if o.count < 1 {
		return usagef("--count must be at least 1, got %d", o.count)
	}
	if err := o.clock.validate(); err != nil {
		return err
	}
	// Decided before connecting, as for purge: a pattern nobody can confirm touches nothing.
	if p := o.firstPattern(); p != "" && !o.yes && !o.dryRun && !(f.IO.StdinTTY && f.IO.StdoutTTY) {
		return usagef("%s is a pattern: add --yes to reset every limiter it matches (try --dry-run first)", p)
	}
	return nil
}

func (o *resetOptions) firstPattern() string {
	for _, a := range o.args {
		if keys.IsPattern(a) {
			return a
		}
	}
	return ""
}

func runReset(ctx context.Context, f *Factory, opts *resetOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	sel, err := keys.Select(ctx, rdb, opts.args, keys.SelectOptions{Count: opts.count})
	if err != nil {
		return err
	}
	kopts := keys.ResetOptions{DryRun: opts.dryRun, Force: opts.force, Batch: opts.batch, Count: opts.count, Clock: opts.clock.clock(f, rdb)}
	plan, err := keys.PlanReset(ctx, rdb, sel, kopts)
	if err != nil {
		return err
	}
	if n := plan.Deletes(); opts.firstPattern() != "" && !opts.yes && !opts.dryRun && n > 0 {
		limiters := 0
		for _, k := range plan.Keys {
			if k.Skipped == "" {
				limiters++
			}
		}
		q := fmt.Sprintf("Reset %d %s: delete %d %s on %d %s?", limiters, human.Plural(limiters, "limiter", "limiters"),
			n, human.Plural(n, "key", "keys"), sel.Nodes(), human.Plural(sel.Nodes(), "node", "nodes"))
		ok, err := promptYes(ctx, f.IO, q)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("reset not confirmed: nothing was deleted")
		}
	}
	res, runErr := keys.Reset(ctx, rdb, plan, kopts)
	// After a failure, the report of what was deleted before it, when anything was.
	if runErr != nil && res.TotalDeleted == 0 {
		return runErr
	}
	if err := printReport(f.IO.Out, f.IO.TerminalWidth(), format, report{table: resetTable(res), json: res}); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if len(sel.Targets) == 0 {
		notef(f.IO.ErrOut, "no key matches %s: nothing to reset", strings.Join(opts.args, " "))
	}
	var unknown []string
	for _, k := range res.Keys {
		if k.Skipped == keys.SkipUnknownKind {
			unknown = append(unknown, k.Key)
		}
	}
	if len(unknown) > 0 {
		notef(f.IO.ErrOut, "%s left alone: kind unknown (inspect shows what %s); --force deletes %s",
			describeKeys(unknown), human.Plural(len(unknown), "it holds", "they hold"), human.Plural(len(unknown), "it", "them"))
	}
	if opts.dryRun {
		notef(f.IO.ErrOut, "dry run: nothing was deleted; a real run would delete %d %s", res.TotalDeleted, human.Plural(res.TotalDeleted, "key", "keys"))
	}
	if res.Interrupted {
		return interruptedError(fmt.Sprintf("reset stopped between batches after deleting %d %s", res.TotalDeleted, human.Plural(res.TotalDeleted, "key", "keys")))
	}
	return nil
}

// resetTable: the key, whether it went and what went with it always show; on a narrow terminal
// the node goes first, then the kind; then the keys (in the middle) and the partners are cut.
// The skipped column shows only when a key was skipped (tsv: always).
func resetTable(res keys.ResetResult) tableprint.Table[keys.ResetKey] {
	type k = keys.ResetKey
	skipped := 0
	for _, key := range res.Keys {
		if key.Skipped != "" {
			skipped++
		}
	}
	deleted := tableprint.Column[k]{Header: "deleted", Total: strconv.FormatInt(res.TotalDeleted, 10) + " keys",
		Human:   func(x k) string { return yesNo(x.Deleted) },
		Machine: func(x k) string { return strconv.FormatBool(x.Deleted) }}
	if res.DryRun {
		deleted.Header, deleted.Field = "would delete", "deleted"
	}
	return tableprint.Table[keys.ResetKey]{Rows: res.Keys, Totals: true, Optional: 2, Columns: []tableprint.Column[k]{
		{Header: "key", Human: func(x k) string { return x.Key }, MinWidth: 20, Cut: tableprint.CutMiddle,
			Total: fmt.Sprintf("total (%d keys)", len(res.Keys))},
		{Header: "node", Human: func(x k) string { return x.Node }, MinWidth: 12, Cut: tableprint.CutMiddle, Priority: 4},
		{Header: "kind", Human: func(x k) string { return string(x.Kind) }, Priority: 3},
		deleted,
		{Header: "with", Human: func(x k) string { return strings.Join(x.With, ", ") }, MinWidth: 16, Cut: tableprint.CutMiddle,
			Machine: func(x k) string { return strings.Join(x.With, " ") }},
		{Header: "skipped", Human: func(x k) string { return x.Skipped }, MinWidth: 16, Priority: 1,
			HideZero: true, Total: fmt.Sprintf("%d skipped", skipped)},
	}}
}
