package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// purge writes only through the purge_stale script. The smallest ACL that runs it (checked by
// TestPurgeACLs and, on a cluster, TestInspectAndPurgeOnACluster):
//
//	user purger on >PASSWORD ~rl:* resetchannels -@all +scan +type +zrange +zcount +zcard
//	  +evalsha +eval +zremrangebyrank +ping +time
//	  (a cluster adds +cluster|slots)
//
// scan and type find the keys; zcard and zrange read five sampled scores (unit and score-mode
// detection, not needed with --score-unit); zcount and zcard make --dry-run; evalsha runs the script (eval when the
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
	scoreMode string
	scores    keys.ScoreMode
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
	fl.StringVar(&opts.scoreMode, "scores", "auto", "what scores mean: start, deadline (when the member expires) or auto")
	fl.StringVar(&opts.clock.name, "clock", "server", "reference time: server (its TIME) or local (this machine's clock)")
	c.ValidArgsFunction = cobra.NoFileCompletions // key names live in Redis
	c.RegisterFlagCompletionFunc("score-unit", fixedCompletion(scoreUnits...))
	c.RegisterFlagCompletionFunc("scores", fixedCompletion(scoreModes...))
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
	if o.scores, err = parseScoreMode(o.scoreMode); err != nil {
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

	// Added after SPEC section 6 (CHANGELOG): null when the key's scores were not read as times.
	ScoreUnit     *string `json:"score_unit"`
	Scores        *string `json:"scores"`         // start or deadline
	ScoresGuessed bool    `json:"scores_guessed"` // --scores auto decided it
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
			// A no is an answer, not a failure: exit 0, and under -o json a report of nothing.
			if format == "json" {
				if err := printReport(f.IO.Out, 0, format, purgeReport(keys.PurgeResult{}, opts)); err != nil {
					return err
				}
			}
			notef(f.IO.ErrOut, "purge not confirmed: nothing removed")
			return nil
		}
	}
	res, runErr := keys.Purge(ctx, rdb, sel, keys.PurgeOptions{
		OlderThan: opts.olderThan, Batch: int64(opts.batch), DryRun: opts.dryRun, Unit: opts.unit, Scores: opts.scores, Clock: opts.clock.clock(f, rdb),
	})
	// After a failure, print what was done before it if anything was removed: the operator
	// must know. Nothing removed: the error line alone says it all.
	if runErr != nil && res.TotalRemoved == 0 {
		return runErr
	}
	if err := printReport(f.IO.Out, f.IO.TerminalWidth(), format, purgeReport(res, opts)); err != nil {
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
	var guessed []string
	for _, k := range res.Keys {
		if k.Scores == keys.ScoresDeadline && k.Guessed {
			guessed = append(guessed, k.Key)
		}
	}
	if len(guessed) > 0 {
		notef(f.IO.ErrOut, "%s read as deadlines: most of %s scores lie in the future (--scores auto); a member went once its deadline passed %s ago",
			describeKeys(guessed), human.Plural(len(guessed), "its", "their"), humanDuration(opts.olderThan))
	}
	if res.Interrupted {
		return interruptedError(fmt.Sprintf("purge stopped between batches after removing %d %s from %d %s",
			res.TotalRemoved, human.Plural(res.TotalRemoved, "member", "members"), len(res.Keys), human.Plural(len(res.Keys), "key", "keys")))
	}
	return nil
}

func purgeReport(res keys.PurgeResult, opts *purgeOptions) report {
	out := purgeJSON{SchemaVersion: SchemaVersion, DryRun: opts.dryRun, OlderThanMs: opts.olderThan.Milliseconds(), Keys: []purgeKeyJSON{}}
	for _, k := range res.Keys {
		j := purgeKeyJSON{Key: k.Key, Removed: k.Removed, Remaining: k.Remaining, Skipped: k.Skipped, ScoresGuessed: k.Guessed}
		if k.Unit != "" {
			u := string(k.Unit)
			j.ScoreUnit = &u
		}
		if k.Scores != "" {
			m := string(k.Scores)
			j.Scores = &m
		}
		out.Keys = append(out.Keys, j)
	}
	out.TotalRemoved = res.TotalRemoved
	return report{table: purgeTable(res, opts.dryRun), json: out}
}

// purgeTable: the key, what was removed and what remains always show. On a narrow terminal
// the node goes first, then the unit; then keys (in the middle) and why a key was skipped are
// cut; then whether scores were read as deadlines goes. The skipped column shows only when a
// key was skipped, the scores column only when a set was read as deadlines (tsv: always).
func purgeTable(res keys.PurgeResult, dryRun bool) tableprint.Table[keys.PurgedKey] {
	type k = keys.PurgedKey
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	var remaining int64
	skipped := 0
	for _, key := range res.Keys {
		remaining += key.Remaining
		if key.Skipped != "" {
			skipped++
		}
	}
	removed := tableprint.Column[k]{Header: "removed", Human: func(x k) string { return itoa(x.Removed) }, Total: itoa(res.TotalRemoved)}
	if dryRun {
		removed.Header, removed.Field = "would remove", "removed"
	}
	return tableprint.Table[keys.PurgedKey]{Rows: res.Keys, Totals: true, Optional: 2, Columns: []tableprint.Column[k]{
		{Header: "key", Human: func(x k) string { return x.Key }, Whole: true,
			Total: fmt.Sprintf("total (%d keys)", len(res.Keys))},
		{Header: "node", Human: func(x k) string { return x.Node }, Whole: true, Priority: 4},
		{Header: "unit", Human: func(x k) string { return string(x.Unit) }, Priority: 3},
		removed,
		{Header: "remaining", Human: func(x k) string { return itoa(x.Remaining) }, Total: itoa(remaining)},
		{Header: "skipped", Human: func(x k) string { return x.Skipped }, MinWidth: 16, Priority: 1,
			HideZero: true, Total: fmt.Sprintf("%d skipped", skipped)},
		{Header: "scores", Priority: 2, HideZero: true, // on a terminal only deadlines are news
			Human: func(x k) string {
				if x.Scores != keys.ScoresDeadline {
					return ""
				}
				return scoresCell(x.Scores, x.Guessed)
			},
			Machine: func(x k) string { return scoresCell(x.Scores, x.Guessed) }},
	}}
}
