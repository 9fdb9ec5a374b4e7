package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
)

// inspect reads, and never writes. The smallest ACL that runs it (checked by
// TestInspectAsAReadOnlyACLUser and, on a cluster, TestInspectAndPurgeOnACluster):
//
//	single server: user reader on >PASSWORD ~* resetchannels -@all +@read +ping +time
//	cluster:       user reader on >PASSWORD ~* resetchannels -@all +@read +ping +time +cluster|slots
//
// +@read covers SCAN, TYPE, PTTL, MEMORY USAGE, ZCARD, ZRANGE, ZCOUNT, STRLEN, GETRANGE, HLEN,
// HMGET, LLEN, SCARD and XLEN, and no command that writes; the same without the category is
// +scan +type +pttl +memory|usage +zcard +zrange +zcount +strlen +getrange +hlen +hmget +llen
// +scard +xlen. +ping is the connection check; +time the server clock (not needed with --clock
// local); +cluster|slots the slot map of go-redis's cluster client (+command, its command
// table, is optional: refused, it is only logged). A single --addr is recognised as a cluster
// node by HELLO, which needs no permission. Without MEMORY USAGE (-memory), memory is reported
// as unknown. docs/acl.md gives the explicit command list, tested by cmd/acl_test.go.

// The key types SCAN TYPE accepts.
var redisTypes = []string{"string", "list", "set", "zset", "hash", "stream"}

type inspectOptions struct {
	args      []string
	count     int64
	maxKeys   int
	keyType   string
	stale     time.Duration
	limit     int64
	hasLimit  bool
	scoreUnit string
	unit      keys.ScoreUnit
	clock     keyClockFlag
	members   string
	top       int64
	watch     time.Duration
}

func newInspectCmd(f *Factory) *cobra.Command {
	opts := &inspectOptions{}
	c := &cobra.Command{
		Use:   "inspect [PATTERN|KEY...]",
		Short: "Show live limiter keys: kind, size, TTL, member ages, stale members, memory (read-only)",
		Long: `Finds keys with SCAN MATCH on every master (never KEYS, which blocks the server) and reads
each with read-only commands: inspect never writes. An argument with *, ? or [ is a pattern;
any other is a key name, read directly. No argument means every key.

Per key: the Redis type; the kind (concurrency set, window_log, counter, bucket or unknown),
read from the structure: a sorted set whose scores are timestamps and whose members look like
request ids is a concurrency set or a window log (told apart by naming hints, then by how far
the members spread against the TTL), a string holding an integer is a counter, a hash with
tokens and ts fields is a token bucket; the size (members, a counter's count, a bucket's whole
tokens, another type's length); the TTL; the oldest and newest member's age; members older
than --stale; and MEMORY USAGE ("-" when the server or ACL refuses it).

Flags: NO_TTL (the key never expires: an abandoned limiter key lives forever), STALE (members
older than --stale), OVER_LIMIT (a concurrency set, window log or counter above --limit).

Scores are read as times in --score-unit; auto picks, per set, the unit in which the newest
score is a plausible time near now. Ages are measured from the server's TIME (--clock local:
this machine's clock).`,
		Example: `  limitctl inspect 'rl:*' --stale 10m --limit 20
  limitctl inspect rl:user:42 -o json
  limitctl inspect --members rl:user:42 --top 10 --stale 30s
  limitctl inspect 'rl:*' --watch 1s`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.args = args
			opts.hasLimit = c.Flags().Changed("limit")
			if err := opts.validate(c); err != nil {
				return err
			}
			return runInspect(c.Context(), f, opts)
		},
	}
	fl := c.Flags()
	fl.Int64Var(&opts.count, "count", keys.DefaultScanCount, "SCAN COUNT hint: keyspace slots each SCAN call walks")
	fl.IntVar(&opts.maxKeys, "max-keys", 10000, "stop after this many keys, with a note (0: no bound)")
	fl.StringVar(&opts.keyType, "type", "", "only keys of this Redis type, filtered by SCAN TYPE: "+strings.Join(redisTypes, ", "))
	fl.DurationVar(&opts.stale, "stale", 0, "count members at least this old as stale (flag STALE), e.g. 10m")
	fl.Int64Var(&opts.limit, "limit", 0, "flag OVER_LIMIT when a set holds more members, or a counter counts more, than this")
	fl.StringVar(&opts.scoreUnit, "score-unit", "auto", "unit of sorted-set scores: auto, s, ms, us or ns")
	fl.StringVar(&opts.clock.name, "clock", "server", "reference time: server (its TIME) or local (this machine's clock)")
	fl.StringVar(&opts.members, "members", "", "list the members of this sorted set, oldest first, with score, time, age and staleness")
	fl.Int64Var(&opts.top, "top", 100, "with --members: how many members to list, oldest first (0: all)")
	fl.DurationVar(&opts.watch, "watch", 0, "refresh every interval until q or Ctrl-C, e.g. 1s")
	c.ValidArgsFunction = cobra.NoFileCompletions // key names live in Redis
	c.RegisterFlagCompletionFunc("members", cobra.NoFileCompletions)
	c.RegisterFlagCompletionFunc("type", fixedCompletion(redisTypes...))
	c.RegisterFlagCompletionFunc("score-unit", fixedCompletion(scoreUnits...))
	c.RegisterFlagCompletionFunc("clock", fixedCompletion(clockNames...))
	return c
}

func (o *inspectOptions) validate(c *cobra.Command) error {
	var err error
	if o.unit, err = parseScoreUnit(o.scoreUnit); err != nil {
		return err
	}
	if err := o.clock.validate(); err != nil {
		return err
	}
	switch {
	case o.count < 1:
		return usagef("--count must be at least 1, got %d", o.count)
	case o.maxKeys < 0:
		return usagef("--max-keys must be 0 (no bound) or more, got %d", o.maxKeys)
	case o.stale < 0:
		return usagef("--stale must be positive, got %s", o.stale)
	case o.hasLimit && o.limit < 0:
		return usagef("--limit must be 0 or more, got %d", o.limit)
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
	if o.keyType != "" {
		ok := false
		for _, t := range redisTypes {
			ok = ok || t == o.keyType
		}
		if !ok {
			return usagef("unknown --type %q: want one of %s", o.keyType, strings.Join(redisTypes, ", "))
		}
	}
	return nil
}

// inspectView is one rendered inspection: the report and the notes that go with it.
type inspectView struct {
	report report
	notes  []string
}

func runInspect(ctx context.Context, f *Factory, opts *inspectOptions) error {
	format, err := f.Format()
	if err != nil {
		return err
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return err
	}
	clock := opts.clock.clock(f, rdb)
	snapshot := func(ctx context.Context) (inspectView, error) {
		if opts.members != "" {
			return inspectMembers(ctx, rdb, clock, opts, format)
		}
		return inspectKeys(ctx, rdb, clock, opts, format)
	}
	if opts.watch == 0 {
		v, err := snapshot(ctx)
		if err != nil {
			return err
		}
		if err := writeReport(f.IO.Out, format, v.report); err != nil {
			return err
		}
		for _, n := range v.notes {
			notef(f.IO.ErrOut, "%s", n)
		}
		return nil
	}
	// Live on a terminal; without one (a pipe, CI) bubbletea must not start: it would open
	// /dev/tty behind the caller's back. Print a fresh report every interval instead.
	if f.IO.StdoutTTY && f.IO.StdinTTY && format == "table" {
		return watchInspect(ctx, f, opts, func(ctx context.Context) (string, error) {
			v, err := snapshot(ctx)
			if err != nil {
				return "", err
			}
			var b bytes.Buffer
			if err := writeReport(&b, format, v.report); err != nil {
				return "", err
			}
			for _, n := range v.notes {
				notef(&b, "%s", n)
			}
			return b.String(), nil
		})
	}
	for first := true; ; first = false {
		v, err := snapshot(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return interruptedError("watch stopped")
			}
			return err
		}
		if !first && format != "json" {
			fmt.Fprintln(f.IO.Out)
		}
		if err := writeReport(f.IO.Out, format, v.report); err != nil {
			return err
		}
		for _, n := range v.notes {
			notef(f.IO.ErrOut, "%s", n)
		}
		select {
		case <-ctx.Done():
			return interruptedError("watch stopped")
		case <-time.After(opts.watch):
		}
	}
}

// inspectKeyJSON is one key of inspect -o json (SPEC section 6).
type inspectKeyJSON struct {
	Key         string   `json:"key"`
	Node        string   `json:"node"`
	Type        string   `json:"type"`
	Kind        string   `json:"kind"`
	Size        int64    `json:"size"`
	TTLMs       int64    `json:"ttl_ms"` // -1: no TTL
	OldestAgeMs *int64   `json:"oldest_age_ms"`
	NewestAgeMs *int64   `json:"newest_age_ms"`
	Stale       int64    `json:"stale"`
	MemoryBytes *int64   `json:"memory_bytes"`
	Flags       []string `json:"flags"`
}

type inspectJSON struct {
	SchemaVersion int              `json:"schema_version"`
	Scanned       int              `json:"scanned"`
	Keys          []inspectKeyJSON `json:"keys"`
}

func inspectKeys(ctx context.Context, rdb redis.UniversalClient, clock keys.Clock, opts *inspectOptions, format string) (inspectView, error) {
	sel, err := keys.Select(ctx, rdb, opts.args, keys.SelectOptions{Count: opts.count, MaxKeys: opts.maxKeys, Type: opts.keyType})
	if err != nil {
		return inspectView{}, err
	}
	in, err := keys.Inspect(ctx, rdb, sel, keys.InspectOptions{
		Stale: opts.stale, Limit: opts.limit, HasLimit: opts.hasLimit, Unit: opts.unit, Clock: clock,
	})
	if err != nil {
		return inspectView{}, err
	}
	human := format == "table"
	r := report{header: []string{"key", "node", "type", "kind", "size", "ttl", "oldest", "newest", "stale", "memory", "flags"}}
	if !human {
		r.header = []string{"key", "node", "type", "kind", "size", "ttl_ms", "oldest_age_ms", "newest_age_ms", "stale", "memory_bytes", "flags"}
	}
	out := inspectJSON{SchemaVersion: SchemaVersion, Scanned: in.Scanned, Keys: []inspectKeyJSON{}}
	for _, k := range in.Keys {
		j := inspectKeyJSON{
			Key: k.Key, Node: k.Node, Type: k.Type, Kind: string(k.Kind), Size: k.Size, TTLMs: -1,
			OldestAgeMs: msPtr(k.OldestAge), NewestAgeMs: msPtr(k.NewestAge), Stale: k.Stale,
			MemoryBytes: k.Memory, Flags: []string{},
		}
		if k.TTL >= 0 {
			j.TTLMs = k.TTL.Milliseconds()
		}
		for _, fl := range k.Flags {
			j.Flags = append(j.Flags, string(fl))
		}
		out.Keys = append(out.Keys, j)
		r.rows = append(r.rows, []string{
			k.Key, k.Node, k.Type, string(k.Kind), strconv.FormatInt(k.Size, 10),
			ttlCell(k.TTL, human), ageCell(k.OldestAge, human), ageCell(k.NewestAge, human),
			strconv.FormatInt(k.Stale, 10), memoryCell(k.Memory, human), strings.Join(j.Flags, ","),
		})
	}
	tot := in.Totals()
	memory := strconv.FormatInt(tot.Memory, 10)
	if human {
		memory = humanBytes(tot.Memory)
	}
	if tot.MemoryUnknown > 0 {
		memory += fmt.Sprintf(" (+%d unknown)", tot.MemoryUnknown)
	}
	members := strconv.FormatInt(tot.Members, 10)
	if human {
		members += " members"
	}
	r.footer = []string{fmt.Sprintf("total (%d keys)", tot.Keys), "", "", "", members, "", "", "", strconv.FormatInt(tot.Stale, 10), memory, ""}
	r.json = out

	var notes []string
	// An empty match is an answer, not an error: the report has no keys, the note says why,
	// and the exit code is 0 (a script can test for zero keys in the JSON).
	if sel.Scanned == 0 {
		notes = append(notes, fmt.Sprintf("no key matches %s", describeArgs(opts.args)))
	}
	if in.Truncated {
		notes = append(notes, fmt.Sprintf("stopped at --max-keys %d: more keys match (raise --max-keys, 0 for no bound, or narrow the pattern)", opts.maxKeys))
	}
	if in.Vanished > 0 {
		notes = append(notes, fmt.Sprintf("%d key(s) vanished between SCAN and reading them (expired or deleted)", in.Vanished))
	}
	for _, m := range in.Missing {
		notes = append(notes, fmt.Sprintf("no such key: %s", m))
	}
	return inspectView{report: r, notes: notes}, nil
}

func describeArgs(args []string) string {
	if len(args) == 0 {
		return "* (the whole keyspace is empty)"
	}
	return strings.Join(args, " ")
}

type memberJSON struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
	Time   *string `json:"time"`
	AgeMs  *int64  `json:"age_ms"`
	Stale  bool    `json:"stale"`
}

type membersJSON struct {
	SchemaVersion int          `json:"schema_version"`
	Key           string       `json:"key"`
	Node          string       `json:"node"`
	Size          int64        `json:"size"`
	ScoreUnit     *string      `json:"score_unit"`
	Members       []memberJSON `json:"members"`
}

func inspectMembers(ctx context.Context, rdb redis.UniversalClient, clock keys.Clock, opts *inspectOptions, format string) (inspectView, error) {
	list, err := keys.Members(ctx, rdb, opts.members, keys.MembersOptions{Top: opts.top, Stale: opts.stale, Unit: opts.unit, Clock: clock})
	if err != nil {
		if errors.Is(err, keys.ErrNotSortedSet) {
			return inspectView{}, fmt.Errorf("%v: --members lists sorted-set members; inspect the key without --members", err)
		}
		return inspectView{}, err
	}
	human := format == "table"
	r := report{header: []string{"member", "score", "time", "age", "stale"}}
	if !human {
		r.header = []string{"member", "score", "time", "age_ms", "stale"}
	}
	out := membersJSON{SchemaVersion: SchemaVersion, Key: list.Key, Node: list.Node, Size: list.Size, Members: []memberJSON{}}
	if list.Unit != "" {
		u := string(list.Unit)
		out.ScoreUnit = &u
	}
	stale := 0
	for _, m := range list.Members {
		j := memberJSON{Member: m.Member, Score: m.Score, AgeMs: msPtr(m.Age), Stale: m.Stale}
		timeCell := "-"
		if !human {
			timeCell = ""
		}
		if m.Time != nil {
			s := m.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
			j.Time, timeCell = &s, s
		}
		if m.Stale {
			stale++
		}
		out.Members = append(out.Members, j)
		r.rows = append(r.rows, []string{m.Member, strconv.FormatFloat(m.Score, 'f', -1, 64), timeCell, ageCell(m.Age, human), yesNo(m.Stale)})
	}
	r.footer = []string{fmt.Sprintf("%d of %d members", len(list.Members), list.Size), "", "", "", fmt.Sprintf("%d stale", stale)}
	r.json = out
	var notes []string
	if list.Unit == "" {
		notes = append(notes, fmt.Sprintf("the scores of %s are not timestamps in any unit; give --score-unit to read them as times", list.Key))
	}
	return inspectView{report: r, notes: notes}, nil
}

func msPtr(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}

func ttlCell(ttl time.Duration, human bool) string {
	switch {
	case ttl < 0 && human:
		return "none"
	case ttl < 0:
		return "-1"
	case human:
		return humanDuration(ttl)
	}
	return strconv.FormatInt(ttl.Milliseconds(), 10)
}

func ageCell(d *time.Duration, human bool) string {
	switch {
	case d == nil && human:
		return "-"
	case d == nil:
		return ""
	case human:
		return humanDuration(*d)
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

func memoryCell(m *int64, human bool) string {
	switch {
	case m == nil && human:
		return "-"
	case m == nil:
		return ""
	case human:
		return humanBytes(*m)
	}
	return strconv.FormatInt(*m, 10)
}
