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

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// inspect reads, and never writes. The smallest ACL that runs it (checked by
// TestInspectAsAReadOnlyACLUser and, on a cluster, TestInspectAndPurgeOnACluster):
//
//	single server: user reader on >PASSWORD ~* resetchannels -@all +@read +ping +time
//	cluster:       user reader on >PASSWORD ~* resetchannels -@all +@read +ping +time +cluster|slots
//
// +@read covers SCAN, TYPE, PTTL, MEMORY USAGE, ZCARD, ZRANGE, ZCOUNT, STRLEN, GETRANGE, HLEN,
// HMGET, LLEN, LINDEX, SCARD and XLEN, and no command that writes; the same without the category
// is +scan +type +pttl +memory|usage +zcard +zrange +zcount +strlen +getrange +hlen +hmget +llen
// +lindex +scard +xlen. +ping is the connection check; +time the server clock (not needed with --clock
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
	scoreMode string
	scores    keys.ScoreMode
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

Per key: the Redis type; the kind, read from the structure (docs/kinds.md has each rule with
an example): a sorted set whose scores are timestamps and whose members look like request ids
is a concurrency set or a window_log (told apart by naming hints, then by how far the members
spread against the TTL); a string holding an integer is a counter, and a sliding_counter when
it is <id>:<window index> beside <id>:<index-1> (the estimate is shown); a string or hash
field holding a theoretical arrival time is gcra (when it is full again is shown when the
epoch is known); a hash with tokens and a refill time (tokens/ts, tokens/refilledAt, ...), or
two strings <prefix>tokens and <prefix>timestamp, is a bucket. Other libraries' layouts: a list
of timestamps is a window_log; a hash of start, end and count, or a counter beside <key>:timer,
is a counter whose window end is shown; {<key>} beside {<key>}/-1 is a sliding_counter; held
lock slots <name><i> are concurrency keys of one. Then the size (members, a counter's count, a bucket's whole tokens, another type's
length); the TTL; the oldest and newest member's age; members older than --stale; MEMORY USAGE
("-" when the server or ACL refuses it); and a detail column for what the kind adds.

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
	fl.StringVar(&opts.scoreMode, "scores", "auto", "what sorted-set scores mean: start, deadline (when the member expires) or auto")
	fl.StringVar(&opts.clock.name, "clock", "server", "reference time: server (its TIME) or local (this machine's clock)")
	fl.StringVar(&opts.members, "members", "", "list the members of this sorted set, oldest first, with score, time, age and staleness")
	fl.Int64Var(&opts.top, "top", 100, "with --members: how many members to list, oldest first (0: all)")
	fl.DurationVar(&opts.watch, "watch", 0, "refresh every interval until q or Ctrl-C, e.g. 1s")
	c.ValidArgsFunction = cobra.NoFileCompletions // key names live in Redis
	c.RegisterFlagCompletionFunc("members", cobra.NoFileCompletions)
	c.RegisterFlagCompletionFunc("type", fixedCompletion(redisTypes...))
	c.RegisterFlagCompletionFunc("score-unit", fixedCompletion(scoreUnits...))
	c.RegisterFlagCompletionFunc("scores", fixedCompletion(scoreModes...))
	c.RegisterFlagCompletionFunc("clock", fixedCompletion(clockNames...))
	return c
}

func (o *inspectOptions) validate(c *cobra.Command) error {
	var err error
	if o.unit, err = parseScoreUnit(o.scoreUnit); err != nil {
		return err
	}
	if o.scores, err = parseScoreMode(o.scoreMode); err != nil {
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
			return inspectMembers(ctx, rdb, clock, opts)
		}
		return inspectKeys(ctx, rdb, clock, opts)
	}
	if opts.watch == 0 {
		v, err := snapshot(ctx)
		if err != nil {
			return err
		}
		if err := printReport(f.IO.Out, f.IO.TerminalWidth(), format, v.report); err != nil {
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
			if err := printReport(&b, f.IO.TerminalWidth(), format, v.report); err != nil {
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
		if err := printReport(f.IO.Out, f.IO.TerminalWidth(), format, v.report); err != nil {
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

	// Added after SPEC section 6 (CHANGELOG): null when they do not apply to the key.
	ScoreUnit     *string `json:"score_unit"`     // a sorted set's or bucket's time unit
	Scores        *string `json:"scores"`         // a sorted set's scores: start or deadline
	ScoresGuessed bool    `json:"scores_guessed"` // --scores auto decided it
	Expired       *int64  `json:"expired"`        // deadline scores: members past their deadline
	FullAtMs      *int64  `json:"full_at_ms"`     // gcra: Unix ms when the key is back to a full burst; counter: when its window ends
	FullInMs      *int64  `json:"full_in_ms"`     // ms until then (0: full now)
	WindowMs      *int64  `json:"window_ms"`      // sliding_counter: the inferred window; counter hash: end - start
	Estimate      *int64  `json:"estimate"`       // sliding_counter: the sliding-window count now
	PairKey       *string `json:"pair_key"`       // sliding_counter: the other window's key; bucket in two strings: the other string
}

type inspectJSON struct {
	SchemaVersion int              `json:"schema_version"`
	Scanned       int              `json:"scanned"`
	Keys          []inspectKeyJSON `json:"keys"`
}

func inspectKeys(ctx context.Context, rdb redis.UniversalClient, clock keys.Clock, opts *inspectOptions) (inspectView, error) {
	sel, err := keys.Select(ctx, rdb, opts.args, keys.SelectOptions{Count: opts.count, MaxKeys: opts.maxKeys, Type: opts.keyType})
	if err != nil {
		return inspectView{}, err
	}
	in, err := keys.Inspect(ctx, rdb, sel, keys.InspectOptions{
		Stale: opts.stale, Limit: opts.limit, HasLimit: opts.hasLimit, Unit: opts.unit, Scores: opts.scores, Clock: clock,
	})
	if err != nil {
		return inspectView{}, err
	}
	var guessedDeadlines []string
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
		addKindFields(&j, k, in.Now)
		if k.Scores == keys.ScoresDeadline && k.ScoresGuessed {
			guessedDeadlines = append(guessedDeadlines, k.Key)
		}
		out.Keys = append(out.Keys, j)
	}
	r := report{table: inspectTable(out.Keys, in.Totals()), json: out}

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
	if n := len(guessedDeadlines); n > 0 {
		notes = append(notes, fmt.Sprintf("%s read as deadlines: most of %s scores lie in the future (--scores auto; --scores start reads them as start times)",
			describeKeys(guessedDeadlines), human.Plural(n, "its", "their")))
	}
	return inspectView{report: r, notes: notes}, nil
}

// describeKeys names a few keys: "rl:a", "rl:a and rl:b", "rl:a, rl:b and 3 more".
func describeKeys(ks []string) string {
	switch {
	case len(ks) == 1:
		return ks[0]
	case len(ks) == 2:
		return ks[0] + " and " + ks[1]
	}
	return fmt.Sprintf("%s, %s and %d more", ks[0], ks[1], len(ks)-2)
}

// addKindFields fills the JSON fields that only some kinds have.
func addKindFields(j *inspectKeyJSON, k keys.KeyInfo, now time.Time) {
	str := func(s string) *string { return &s }
	i64 := func(n int64) *int64 { return &n }
	if k.Unit != "" {
		j.ScoreUnit = str(string(k.Unit))
	}
	if k.Scores != "" {
		j.Scores, j.ScoresGuessed = str(string(k.Scores)), k.ScoresGuessed
	}
	j.Expired = k.Expired
	if k.FullAt != nil {
		j.FullAtMs = i64(k.FullAt.UnixMilli())
		j.FullInMs = i64(max(0, k.FullAt.Sub(now).Milliseconds()))
	}
	if k.Window > 0 {
		j.WindowMs = i64(k.Window.Milliseconds())
	}
	j.Estimate = k.Estimate
	if k.PairKey != "" {
		j.PairKey = str(k.PairKey)
	}
}

// detailCell says what a key's kind adds: a gcra key's refill, a sliding counter's estimate,
// a deadline set's expired members.
func detailCell(k inspectKeyJSON) string {
	var parts []string
	switch keys.Kind(k.Kind) {
	case keys.KindGCRA:
		switch {
		case k.FullInMs == nil:
			parts = append(parts, "epoch unknown")
		case *k.FullInMs == 0:
			parts = append(parts, "full")
		default:
			parts = append(parts, "full in "+humanDuration(time.Duration(*k.FullInMs)*time.Millisecond))
		}
	case keys.KindSlidingCounter:
		if k.Estimate != nil {
			parts = append(parts, fmt.Sprintf("estimate %d", *k.Estimate))
		} else if k.WindowMs != nil {
			parts = append(parts, "older window")
		}
		if k.WindowMs != nil {
			parts = append(parts, humanDuration(time.Duration(*k.WindowMs)*time.Millisecond)+" window")
		}
		if k.PairKey != nil {
			parts = append(parts, "with "+*k.PairKey)
		}
	case keys.KindCounter:
		if k.WindowMs != nil {
			parts = append(parts, humanDuration(time.Duration(*k.WindowMs)*time.Millisecond)+" window")
		}
		switch { // a window kept with its end
		case k.FullInMs == nil:
		case *k.FullInMs == 0:
			parts = append(parts, "over")
		default:
			parts = append(parts, "ends in "+humanDuration(time.Duration(*k.FullInMs)*time.Millisecond))
		}
		if k.PairKey != nil {
			parts = append(parts, "with "+*k.PairKey)
		}
	case keys.KindBucket:
		if k.PairKey != nil { // a bucket kept in two strings
			parts = append(parts, "with "+*k.PairKey)
		}
	}
	if k.Scores != nil && keys.ScoreMode(*k.Scores) == keys.ScoresDeadline {
		parts = append(parts, "deadlines")
		if k.ScoresGuessed {
			parts[len(parts)-1] += " (guessed)"
		}
		if k.Expired != nil {
			parts = append(parts, fmt.Sprintf("%d expired", *k.Expired))
		}
	}
	return strings.Join(parts, ", ")
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
	Scores        *string      `json:"scores"`         // start or deadline (added after SPEC section 6)
	ScoresGuessed bool         `json:"scores_guessed"` // --scores auto decided it
	Members       []memberJSON `json:"members"`

	staleGiven bool // --stale was given: without it no member is judged stale (the table shows -)
}

func inspectMembers(ctx context.Context, rdb redis.UniversalClient, clock keys.Clock, opts *inspectOptions) (inspectView, error) {
	list, err := keys.Members(ctx, rdb, opts.members, keys.MembersOptions{Top: opts.top, Stale: opts.stale, Unit: opts.unit, Scores: opts.scores, Clock: clock})
	if err != nil {
		if errors.Is(err, keys.ErrNotSortedSet) {
			return inspectView{}, fmt.Errorf("%v: --members lists sorted-set members; inspect the key without --members", err)
		}
		return inspectView{}, err
	}
	out := membersJSON{SchemaVersion: SchemaVersion, Key: list.Key, Node: list.Node, Size: list.Size, Members: []memberJSON{}, staleGiven: opts.stale > 0}
	if list.Unit != "" {
		u, m := string(list.Unit), string(list.Scores)
		out.ScoreUnit, out.Scores, out.ScoresGuessed = &u, &m, list.Guessed
	}
	for _, m := range list.Members {
		j := memberJSON{Member: m.Member, Score: m.Score, AgeMs: msPtr(m.Age), Stale: m.Stale}
		if m.Time != nil {
			s := m.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
			j.Time = &s
		}
		out.Members = append(out.Members, j)
	}
	r := report{table: membersTable(out), json: out}
	var notes []string
	if list.Unit == "" {
		notes = append(notes, fmt.Sprintf("the scores of %s are not timestamps in any unit; give --score-unit to read them as times", list.Key))
	}
	if list.Scores == keys.ScoresDeadline {
		how := "--scores deadline"
		if list.Guessed {
			how = "most scores lie in the future (--scores auto; --scores start reads them as start times)"
		}
		notes = append(notes, fmt.Sprintf("the scores of %s are read as deadlines: %s; an age is how long ago the deadline passed, negative while it is ahead", list.Key, how))
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

// inspectTable: the key, its size and flags always show (a long key cut in the middle, where
// keys differ). On a narrow terminal the type goes first, then the node, the newest age, memory
// and the TTL (NO_TTL stays among the flags); then keys, flags and details are cut; then the
// details, the oldest age and the kind go. The stale count and the details show only when some
// key has any.
func inspectTable(rows []inspectKeyJSON, tot keys.Totals) tableprint.Table[inspectKeyJSON] {
	type k = inspectKeyJSON
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	memory := humanBytes(tot.Memory)
	if tot.MemoryUnknown > 0 {
		memory = "≥" + memory // some key's memory is unknown ("-")
	}
	return tableprint.Table[inspectKeyJSON]{Rows: rows, Totals: true, Optional: 4, Columns: []tableprint.Column[inspectKeyJSON]{
		{Header: "key", Human: func(x k) string { return x.Key }, Whole: true,
			Total: fmt.Sprintf("total (%d keys)", tot.Keys)},
		{Header: "node", Human: func(x k) string { return x.Node }, Whole: true, Priority: 8},
		{Header: "type", Human: func(x k) string { return x.Type }, Priority: 9},
		{Header: "kind", Human: func(x k) string { return x.Kind }, Priority: 2},
		{Header: "size", Human: func(x k) string { return itoa(x.Size) }, Total: itoa(tot.Members) + " members"},
		{Header: "ttl", Field: "ttl_ms", Human: func(x k) string { return ttlHuman(x.TTLMs) }, Machine: func(x k) string { return itoa(x.TTLMs) }, Priority: 5},
		{Header: "oldest", Field: "oldest_age_ms", Human: func(x k) string { return msHuman(x.OldestAgeMs) }, Machine: func(x k) string { return numberOrEmpty(x.OldestAgeMs) }, Priority: 3},
		{Header: "newest", Field: "newest_age_ms", Human: func(x k) string { return msHuman(x.NewestAgeMs) }, Machine: func(x k) string { return numberOrEmpty(x.NewestAgeMs) }, Priority: 7},
		{Header: "stale", Human: func(x k) string { return itoa(x.Stale) }, HideZero: true, Priority: 1, Total: itoa(tot.Stale) + " stale"},
		{Header: "memory", Field: "memory_bytes", Human: func(x k) string { return bytesHuman(x.MemoryBytes) }, Machine: func(x k) string { return numberOrEmpty(x.MemoryBytes) }, Priority: 6, Total: memory},
		{Header: "flags", Human: func(x k) string { return strings.Join(x.Flags, ",") }, Whole: true},
		{Header: "detail", Human: detailCell, HideZero: true, MinWidth: 16, Priority: 4},
	}}
}

// membersTable: the member and its age always show (a long member cut in the middle); on a
// narrow terminal the score goes first, then the time, then whether it is stale (- without
// --stale: how old is stale is the operator's to say, so no member is called fresh).
func membersTable(list membersJSON) tableprint.Table[memberJSON] {
	type m = memberJSON
	stale := 0
	for _, x := range list.Members {
		if x.Stale {
			stale++
		}
	}
	return tableprint.Table[memberJSON]{Rows: list.Members, Totals: true, Columns: []tableprint.Column[memberJSON]{
		{Header: "member", Human: func(x m) string { return x.Member }, Whole: true,
			Total: fmt.Sprintf("%d of %d members", len(list.Members), list.Size)},
		{Header: "score", Human: func(x m) string { return strconv.FormatFloat(x.Score, 'f', -1, 64) }, Priority: 3},
		{Header: "time", Human: func(x m) string { return deref(x.Time, "-") }, Machine: func(x m) string { return deref(x.Time, "") }, Priority: 2},
		{Header: "age", Field: "age_ms", Human: func(x m) string { return msHuman(x.AgeMs) }, Machine: func(x m) string { return numberOrEmpty(x.AgeMs) }},
		staleColumn(list.staleGiven, stale),
	}}
}

func staleColumn(given bool, stale int) tableprint.Column[memberJSON] {
	if !given {
		// tsv and JSON keep the field as it was (false): only the person's table says "not judged".
		return tableprint.Column[memberJSON]{Header: "stale", Human: func(memberJSON) string { return "-" },
			Machine: func(x memberJSON) string { return yesNo(x.Stale) }, Priority: 1}
	}
	return tableprint.Column[memberJSON]{Header: "stale", Human: func(x memberJSON) string { return yesNo(x.Stale) }, Priority: 1,
		Total: fmt.Sprintf("%d stale", stale)}
}

func deref(s *string, none string) string {
	if s == nil {
		return none
	}
	return *s
}

// ttlHuman reads a TTL in milliseconds, -1 for none.
func ttlHuman(ms int64) string {
	if ms < 0 {
		return "none"
	}
	return humanDuration(time.Duration(ms) * time.Millisecond)
}

// msHuman reads an age in milliseconds; "-" when there is none.
func msHuman(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return humanDuration(time.Duration(*ms) * time.Millisecond)
}

// numberOrEmpty is a number for a script, empty when there is none.
func numberOrEmpty(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

func bytesHuman(n *int64) string {
	if n == nil {
		return "-"
	}
	return humanBytes(*n)
}
