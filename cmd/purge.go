package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys"
)

// purge writes only through the purge_stale script. The smallest ACL that runs it (checked by
// TestPurgeACLs and, on a cluster, TestInspectAndPurgeOnACluster):
//
//	user purger on >PASSWORD ~rl:* resetchannels -@all +scan +type +zrange +zcount +zcard
//	  +evalsha +eval +zremrangebyrank +ping +time
//	  (a cluster adds +cluster|slots)
//
// scan and type find the keys; zrange reads the newest score (unit detection, not needed
// with --score-unit); zcount and zcard make --dry-run; evalsha runs the script (eval when the
// server's script cache lacks it), which itself calls zcount, zremrangebyrank and zcard;
// ping checks the connection and time reads the server clock (not with --clock local). On a
// cluster, cluster|slots serves go-redis's cluster client (+command is optional: refused, it
// is only logged); HELLO, which needs no permission, recognises a single --addr as a cluster
// node. The key pattern (~rl:*) can confine the user to the limiter's keys. docs/acl.md
// gives the same, tested by cmd/acl_test.go.

type purgeOptions struct {
	args      []string
	olderThan time.Duration
	batch     int
	dryRun    bool
	yes       bool
	count     int64
	scoreUnit string
	unit      keys.ScoreUnit
	clock     keyClockFlag
}

func newPurgeCmd(f *Factory) *cobra.Command {
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
nothing. Scores are read in --score-unit (auto: per set, from the magnitude of its newest
score); now is the server's TIME (--clock local: this machine's clock).`,
		Example: `  limitctl purge 'rl:conc:*' --older-than 10m --dry-run
  limitctl purge 'rl:conc:*' --older-than 10m --yes
  limitctl purge rl:conc:user42 --older-than 30s --batch 500`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &usageError{Msg: "want one or more keys or patterns to purge", Command: c.CommandPath()}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.args = args
			if err := opts.validate(c, f); err != nil {
				return err
			}
			return runPurge(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.DurationVar(&opts.olderThan, "older-than", 0, "remove members at least this old, e.g. 10m (required)")
	fl.IntVar(&opts.batch, "batch", keys.DefaultBatch, fmt.Sprintf("at most this many members removed per script call (1-%d)", keys.MaxBatch))
	fl.BoolVar(&opts.dryRun, "dry-run", false, "count what would be removed (ZCOUNT); write nothing")
	fl.BoolVarP(&opts.yes, "yes", "y", false, "purge keys matched by a pattern without asking (a --dry-run needs no confirmation)")
	fl.Int64Var(&opts.count, "count", keys.DefaultScanCount, "SCAN COUNT hint: keyspace slots each SCAN call walks")
	fl.StringVar(&opts.scoreUnit, "score-unit", "auto", "unit of sorted-set scores: auto, s, ms, us or ns")
	fl.StringVar(&opts.clock.name, "clock", "server", "reference time: server (its TIME) or local (this machine's clock)")
	c.ValidArgsFunction = cobra.NoFileCompletions // key names live in Redis
	c.RegisterFlagCompletionFunc("score-unit", fixedCompletion(scoreUnits...))
	c.RegisterFlagCompletionFunc("clock", fixedCompletion(clockNames...))
	return c
}

func (o *purgeOptions) validate(c *cobra.Command, f *Factory) error {
	var err error
	if !c.Flags().Changed("older-than") {
		return usagef("--older-than is required: purge removes members at least that old, e.g. --older-than 10m")
	}
	if o.olderThan <= 0 {
		return usagef("--older-than must be positive, got %s", o.olderThan)
	}
	if o.batch < 1 || o.batch > keys.MaxBatch {
		return usagef("--batch must be 1 to %d (members per script call), got %d", keys.MaxBatch, o.batch)
	}
	if o.count < 1 {
		return usagef("--count must be at least 1, got %d", o.count)
	}
	if o.unit, err = parseScoreUnit(o.scoreUnit); err != nil {
		return err
	}
	if err := o.clock.validate(); err != nil {
		return err
	}
	// Decided before connecting: without --yes and without a terminal to ask on, a pattern
	// cannot be confirmed, and nothing must be touched.
	if o.hasPattern() && !o.yes && !o.dryRun && !(f.IO.StdinTTY && f.IO.StdoutTTY) {
		return usagef("%s is a pattern: add --yes to purge every key it matches (try --dry-run first)", o.firstPattern())
	}
	return nil
}

func (o *purgeOptions) hasPattern() bool { return o.firstPattern() != "" }

func (o *purgeOptions) firstPattern() string {
	for _, a := range o.args {
		if keys.IsPattern(a) {
			return a
		}
	}
	return ""
}

type purgeKeyJSON struct {
	Key       string `json:"key"`
	Removed   int64  `json:"removed"`
	Remaining int64  `json:"remaining"`
	Skipped   string `json:"skipped"`
}

type purgeJSON struct {
	SchemaVersion int            `json:"schema_version"`
	DryRun        bool           `json:"dry_run"`
	OlderThanMs   int64          `json:"older_than_ms"`
	Keys          []purgeKeyJSON `json:"keys"`
	TotalRemoved  int64          `json:"total_removed"`
}

func runPurge(ctx context.Context, f *Factory, opts *purgeOptions) error {
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
	if opts.hasPattern() && !opts.yes && !opts.dryRun && len(sel.Targets) > 0 {
		q := fmt.Sprintf("Purge members older than %s from %d %s on %d %s?", humanDuration(opts.olderThan),
			len(sel.Targets), human.Plural(len(sel.Targets), "key", "keys"), sel.Nodes(), human.Plural(sel.Nodes(), "node", "nodes"))
		ok, err := promptYes(ctx, f.IO, q)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("purge not confirmed: nothing was removed")
		}
	}
	res, runErr := keys.Purge(ctx, rdb, sel, keys.PurgeOptions{
		OlderThan: opts.olderThan, Batch: int64(opts.batch), DryRun: opts.dryRun, Unit: opts.unit, Clock: opts.clock.clock(f, rdb),
	})
	// After a failure, print what was done before it if anything was removed: the operator
	// must know. Nothing removed: the error line alone says it all.
	if runErr != nil && res.TotalRemoved == 0 {
		return runErr
	}
	if err := writeReport(f.IO.Out, format, purgeReport(res, opts, format)); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	// A pattern that matches nothing is not an error: the report is empty, the note says
	// why, and the exit code is 0, so a scheduled purge of an idle limiter does not page anyone.
	if len(sel.Targets) == 0 {
		notef(f.IO.ErrOut, "no key matches %s: nothing to purge", strings.Join(opts.args, " "))
	}
	if opts.dryRun {
		notef(f.IO.ErrOut, "dry run: nothing was removed; a real run would remove %d %s older than %s", res.TotalRemoved,
			human.Plural(res.TotalRemoved, "member", "members"), humanDuration(opts.olderThan))
	}
	if res.Interrupted {
		return interruptedError(fmt.Sprintf("purge stopped between batches after removing %d %s from %d %s",
			res.TotalRemoved, human.Plural(res.TotalRemoved, "member", "members"), len(res.Keys), human.Plural(len(res.Keys), "key", "keys")))
	}
	return nil
}

func purgeReport(res keys.PurgeResult, opts *purgeOptions, format string) report {
	removedHeader := "removed"
	if opts.dryRun && format == "table" {
		removedHeader = "would remove"
	}
	r := report{header: []string{"key", "node", "unit", removedHeader, "remaining", "skipped"}}
	out := purgeJSON{SchemaVersion: SchemaVersion, DryRun: opts.dryRun, OlderThanMs: opts.olderThan.Milliseconds(), Keys: []purgeKeyJSON{}}
	var remaining int64
	skipped := 0
	for _, k := range res.Keys {
		out.Keys = append(out.Keys, purgeKeyJSON{Key: k.Key, Removed: k.Removed, Remaining: k.Remaining, Skipped: k.Skipped})
		r.rows = append(r.rows, []string{k.Key, k.Node, string(k.Unit), strconv.FormatInt(k.Removed, 10), strconv.FormatInt(k.Remaining, 10), k.Skipped})
		remaining += k.Remaining
		if k.Skipped != "" {
			skipped++
		}
	}
	out.TotalRemoved = res.TotalRemoved
	r.footer = []string{fmt.Sprintf("total (%d keys)", len(res.Keys)), "", "", strconv.FormatInt(res.TotalRemoved, 10),
		strconv.FormatInt(remaining, 10), fmt.Sprintf("%d skipped", skipped)}
	r.json = out
	return r
}
