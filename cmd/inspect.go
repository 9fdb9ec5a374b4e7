package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/internal/tui"
)

// inspect reads, and never writes. Its smallest ACL, a read-only one, is in docs/acl.md, tested by
// TestACLInspectMinimalRule, TestInspectAsAReadOnlyACLUser and, on a cluster,
// TestInspectAndPurgeOnACluster.

type inspectOptions struct {
	args     []string
	inspect  keys.InspectOptions
	keyFlags scoreFlags
	members  string
	top      int64
	watch    time.Duration
}

func newInspectCmd(f *Factory, runF func(context.Context, *Factory, *inspectOptions) error) *cobra.Command {
	if runF == nil {
		runF = runInspect
	}
	opts := &inspectOptions{}
	c := &cobra.Command{
		Use:   "inspect [PATTERN|KEY...]",
		Short: "Show live limiter keys: kind, size, TTL, member ages, stale members, memory (read-only)",
		Long: `Finds keys with SCAN MATCH on every master (never KEYS, which blocks the server) and reads
each with read-only commands: inspect never writes. An argument with *, ? or [ is a pattern;
any other is a key name, read directly. No argument means every key.

Per key: the Redis type; the kind, read from the structure (concurrency, window_log, counter,
sliding_counter, gcra, bucket, unknown: docs/kinds.md has each rule and each library's layout,
with an example); the size (members, a counter's count, a bucket's whole tokens); the TTL; the
oldest and newest member's age; members older than --stale; MEMORY USAGE ("-" when the server
or ACL refuses it); and a detail column for what the kind adds (a window's end, an estimate).

Flags: NO_TTL (the key never expires: an abandoned limiter key lives forever), STALE (members
older than --stale), OVER_LIMIT (a concurrency set, window log or counter above --limit, or a
sliding counter whose estimate is).

Scores are read as times in --score-unit; auto picks, per set, the one unit in which sampled
scores (oldest, newest and three between) are all plausible times near now. --scores says
what a score is: start (when the member began; stale --stale after it) or deadline (when it
expires, as job throttlers keep leases; stale once it passed --stale ago, and the members past
it are counted as expired); auto reads deadlines when most sampled scores lie in the future,
and says so. Ages are now minus the score, measured from the server's TIME (--clock local: this
machine's clock); for deadlines, how long ago the deadline passed (negative: still ahead).`,
		Example: `  limitctl inspect 'rl:*' --stale 10m --limit 20
  limitctl inspect rl:user:42 -o json
  limitctl inspect --members rl:user:42 --top 10 --stale 30s
  limitctl inspect 'rl:*' --watch 1s`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.args = args
			opts.inspect.HasLimit = c.Flags().Changed("limit")
			if err := opts.validate(c); err != nil {
				return err
			}
			return runF(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.Int64Var(&opts.inspect.Select.Count, "count", keys.DefaultScanCount, "SCAN COUNT hint: keyspace slots each SCAN call walks")
	fl.IntVar(&opts.inspect.Select.MaxKeys, "max-keys", 10000, "stop after this many keys, with a note (0: no bound)")
	fl.StringVar(&opts.inspect.Select.Type, "type", "", "only keys of this Redis type, filtered by SCAN TYPE: "+strings.Join(keys.RedisTypes, ", "))
	fl.DurationVar(&opts.inspect.Stale, "stale", 0, "count members at least this old as stale (flag STALE), e.g. 10m")
	fl.Int64Var(&opts.inspect.Limit, "limit", 0, "flag OVER_LIMIT when a set holds more members, or a counter counts more, than this")
	opts.keyFlags.bind(c)
	fl.StringVar(&opts.members, "members", "", "list the members of this sorted set, oldest first, with score, time, age and staleness")
	fl.Int64Var(&opts.top, "top", 100, "with --members: how many members to list, oldest first (0: all)")
	fl.DurationVar(&opts.watch, "watch", 0, "refresh every interval until q or Ctrl-C, e.g. 1s")
	c.ValidArgsFunction = cobra.NoFileCompletions // key names live in Redis
	c.RegisterFlagCompletionFunc("members", cobra.NoFileCompletions)
	c.RegisterFlagCompletionFunc("type", fixedCompletion(keys.RedisTypes...))
	return c
}

func (o *inspectOptions) validate(c *cobra.Command) error {
	if err := o.keyFlags.validate(); err != nil {
		return err
	}
	if err := o.inspect.Check(); err != nil {
		return err
	}
	switch {
	case o.top < 0:
		return usagef("--top must be 0 (all) or more, got %d", o.top)
	case o.watch < 0 || (o.watch > 0 && o.watch < 100*time.Millisecond):
		return usagef("--watch must be at least 100ms, got %s", o.watch)
	case c.Flags().Changed("members") && o.members == "":
		return usagef("--members needs a key name")
	case o.members != "" && len(o.args) > 0:
		return usagef("--members lists one key's members; drop the other arguments (%s)", strings.Join(o.args, " "))
	case o.members != "" && keys.IsPattern(o.members):
		return usagef("--members takes a key name, not a pattern: %s", o.members)
	case c.Flags().Changed("top") && o.members == "":
		return usagef("--top goes with --members KEY")
	}
	o.inspect.Unit, o.inspect.Scores = o.keyFlags.unit, o.keyFlags.scores
	return nil
}

// runInspect reads the keys once, or every --watch interval: live on a terminal, a fresh
// report each interval otherwise.
func runInspect(ctx context.Context, f *Factory, o *inspectOptions) error {
	format, rdb, clock, err := openLiveKeys(ctx, f, o.keyFlags.clock)
	if err != nil {
		return err
	}
	o.inspect.Clock = clock
	read := func(ctx context.Context) (printable, error) {
		if o.members == "" {
			return keys.InspectPatterns(ctx, rdb, o.args, o.inspect)
		}
		return keys.Members(ctx, rdb, o.members, keys.MembersOptions{Top: o.top, Stale: o.inspect.Stale,
			Unit: o.inspect.Unit, Scores: o.inspect.Scores, Clock: o.inspect.Clock})
	}
	if o.watch == 0 {
		r, err := read(ctx)
		if err != nil {
			return err
		}
		return printResult(f, format, r)
	}
	// Live on a terminal; without one (a pipe, CI) bubbletea must not start: it would open
	// /dev/tty behind the caller's back. Print a fresh report every interval instead.
	if f.IO.StdoutTTY && f.IO.StdinTTY && format == tableprint.FormatTable {
		title := strings.TrimSpace("limitctl inspect " + strings.Join(o.args, " "))
		if o.members != "" {
			title = "limitctl inspect --members " + o.members
		}
		last, interrupted, err := tui.Watch(ctx, title, o.watch, f.Now, func(ctx context.Context) (string, error) {
			r, err := read(ctx)
			if err != nil {
				return "", err
			}
			var b bytes.Buffer
			err = writeResult(&b, f.IO.TerminalWidth(), format, r)
			writeNotes(&b, r)
			return b.String(), err
		}, f.IO.In, f.IO.Terminal(), f.IO.ColorProfile())
		fmt.Fprint(f.IO.Out, last)
		if err == nil && interrupted {
			err = interruptedError("watch stopped")
		}
		return err
	}
	err = tui.Repeat(ctx, o.watch, func(first bool) error {
		r, err := read(ctx)
		if err != nil {
			return err
		}
		if !first && format != tableprint.FormatJSON {
			fmt.Fprintln(f.IO.Out)
		}
		return printResult(f, format, r)
	})
	if ctx.Err() != nil {
		return interruptedError("watch stopped")
	}
	return err
}
