package keys

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/scripts"
)

// Batch bounds: one purge_stale call removes at most Batch members, so it holds the server for
// a bounded, short time (about a millisecond per thousand members).
const (
	DefaultBatch = 1000
	MaxBatch     = 10000
)

// Reasons a key is skipped by purge.
const (
	SkipNotSortedSet = "not a sorted set"
	SkipVanished     = "key vanished"
	SkipNoSuchKey    = "no such key"
	SkipNotTimes     = "scores are not timestamps in any unit"
	SkipMixedUnits   = "scores mix units (some read as one unit, some as another)"
	// SkipBinaryMembers: members that are packed binary records are a library's own accounting
	// (Redisson's rate limiter gives a permit back only when it removes the record itself).
	SkipBinaryMembers = "members are binary records (the library's own accounting)"
)

// purgeStale is the shipped script: EVALSHA, with EVAL when the server answers NOSCRIPT.
var purgeStale = redis.NewScript(scripts.PurgeStale)

// PurgeOptions say what a purge removes.
type PurgeOptions struct {
	OlderThan time.Duration // members at least this old go
	Batch     int64         // at most this many members per script call
	DryRun    bool          // count with ZCOUNT, write nothing
	Unit      scores.Unit   // "" or scores.UnitAuto: detected per set from sampled scores
	// Scores is what the scores mean: start (stale D after it) or deadline (stale D after it
	// passed); the cutoff, now - OlderThan, is the same. "" or scores.ModeAuto guesses per set when
	// the unit is detected too, and only labels the report.
	Scores scores.Mode
	Clock  Clock
	// Select bounds how PurgePatterns finds the keys.
	Select SelectOptions
	// Confirm, when set, is asked before anything is removed from keys a pattern matched
	// (PurgePatterns); a no leaves every key as it was. Nil removes without asking (--yes, a
	// dry run, only literal keys).
	Confirm func(question string) (bool, error)
}

// PurgedKey is what purge did to one key, as purge -o json prints it (the node only shows in
// the table). In a dry run, Removed is what would go.
type PurgedKey struct {
	Key       string      `json:"key"`
	Node      string      `json:"-"`
	Removed   int64       `json:"removed"`
	Remaining int64       `json:"remaining"`
	Skipped   string      `json:"skipped"`        // empty, or why the key was left alone
	Unit      scores.Unit `json:"score_unit"`     // null when the scores were not read as times
	Scores    scores.Mode `json:"scores"`         // what the scores were read as; null when not examined
	Guessed   bool        `json:"scores_guessed"` // Scores was guessed by --scores auto
}

// PurgeResult is a whole purge run, and what purge prints: the JSON (MarshalJSON), the Table
// of its keys and the Notes beside them.
type PurgeResult struct {
	Now          time.Time // the reference time; the cutoff is Now - OlderThan
	DryRun       bool
	OlderThan    time.Duration
	Keys         []PurgedKey
	TotalRemoved int64
	Interrupted  bool     // the context was cancelled; Keys holds what was done until then
	Args         []string // the keys and patterns asked for, for the notes
}

// Err is the purge's outcome as an error with its exit code, to return once the result has
// been printed: an interrupt between batches (130), or nil.
func (r PurgeResult) Err() error {
	if !r.Interrupted {
		return nil
	}
	return &exitcode.InterruptedError{What: fmt.Sprintf("purge stopped between batches after removing %d %s from %d %s",
		r.TotalRemoved, human.Plural(r.TotalRemoved, "member", "members"), len(r.Keys), human.Plural(len(r.Keys), "key", "keys"))}
}

// ErrNotConfirmed is a purge or reset the confirmation declined: an answer, not a failure;
// nothing was written, which the result of nothing that comes with it says.
var ErrNotConfirmed = errors.New("not confirmed")

// PurgePatterns selects the keys and patterns of args (Select) and purges them (Purge), asking
// opts.Confirm first when a pattern matched any key (a no returns ErrNotConfirmed with a result
// of nothing). After a failure the result says what was removed before it.
func PurgePatterns(ctx context.Context, rdb redis.UniversalClient, args []string, opts PurgeOptions) (PurgeResult, error) {
	sel, err := Select(ctx, rdb, args, opts.Select)
	if err != nil {
		return PurgeResult{}, err
	}
	if opts.Confirm != nil && slices.ContainsFunc(args, IsPattern) && len(sel.Targets) > 0 {
		q := fmt.Sprintf("Purge members older than %s from %d %s on %d %s?", human.Duration(opts.OlderThan),
			len(sel.Targets), human.Plural(len(sel.Targets), "key", "keys"), sel.Nodes(), human.Plural(sel.Nodes(), "node", "nodes"))
		ok, err := opts.Confirm(q)
		if err != nil {
			return PurgeResult{}, err
		}
		if !ok {
			return PurgeResult{DryRun: opts.DryRun, OlderThan: opts.OlderThan, Keys: []PurgedKey{}, Args: args},
				fmt.Errorf("purge %w: nothing removed", ErrNotConfirmed)
		}
	}
	res, err := Purge(ctx, rdb, sel, opts)
	res.Args = args
	return res, err
}

// Purge removes, from each selected sorted set, the members scored at or before now - OlderThan,
// in batches of at most Batch members per purge_stale call (each call atomic and short), until
// none is left. Keys pass through KEYS, so a cluster routes each call to the key's master.
// A cancelled context stops the run between batches, never inside one: every batch that reached
// Redis is counted. Errors name the key.
func Purge(ctx context.Context, rdb redis.UniversalClient, sel Selection, opts PurgeOptions) (PurgeResult, error) {
	if err := opts.Check(); err != nil {
		return PurgeResult{}, err
	}
	now, err := opts.Clock(ctx)
	if err != nil {
		return PurgeResult{}, err
	}
	res := PurgeResult{Now: now, DryRun: opts.DryRun, OlderThan: opts.OlderThan, Keys: []PurgedKey{}}
	for _, t := range sel.Targets {
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		pk, err := purgeKey(ctx, rdb, t, now, opts)
		res.Keys = append(res.Keys, pk)
		res.TotalRemoved += pk.Removed
		if errors.Is(err, context.Canceled) {
			res.Interrupted = true
			break
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// purgeKey purges one key. A context.Canceled error means it stopped between batches, with pk
// telling what was done.
func purgeKey(ctx context.Context, rdb redis.UniversalClient, t Target, now time.Time, opts PurgeOptions) (PurgedKey, error) {
	pk := PurgedKey{Key: t.Key, Node: t.Node}
	fail := func(what string, err error) (PurgedKey, error) {
		if ctx.Err() != nil {
			return pk, ctx.Err()
		}
		return pk, fmt.Errorf("%s on %s: %s: %w", t.Key, t.Node, what, err)
	}
	typ, err := rdb.Type(ctx, t.Key).Result()
	if err != nil {
		return fail("TYPE", err)
	}
	switch typ {
	case "zset":
	case "none":
		pk.Skipped = SkipVanished
		if t.Named {
			pk.Skipped = SkipNoSuchKey
		}
		return pk, nil
	default:
		pk.Skipped = SkipNotSortedSet
		return pk, nil
	}

	unit := opts.Unit
	explicit := unit != "" && unit != scores.UnitAuto
	sampled, err := sampleMembers(ctx, rdb, t.Key)
	switch {
	case rediserr.IsWrongType(err):
		pk.Skipped = SkipNotSortedSet
		return pk, nil
	case explicit && rediserr.Is(err, rediserr.Permission):
		// An ACL without ZRANGE, as docs/acl.md allows with --score-unit: the members go unseen.
	case err != nil:
		return fail("ZRANGE", err)
	case len(sampled) == 0:
		pk.Skipped = SkipVanished
		return pk, nil
	}
	for _, z := range sampled {
		if binaryMember(memberString(z.Member)) {
			pk.Skipped = SkipBinaryMembers
			return pk, nil
		}
	}
	if !explicit {
		samples := make([]float64, len(sampled))
		for i, z := range sampled {
			samples[i] = z.Score
		}
		rd, ok := scores.Read(samples, now, unit, opts.Scores)
		if !ok {
			// Scores that are not times (ranks, prices), or times in two units, must never be
			// cut by one time: a millisecond cutoff would take every second-scored member.
			pk.Skipped = SkipNotTimes
			if scores.MixedUnits(samples, now) {
				pk.Skipped = SkipMixedUnits
			}
			return pk, nil
		}
		unit, pk.Scores, pk.Guessed = rd.Unit, rd.Mode, rd.Guessed
	} else if opts.Scores == scores.Start || opts.Scores == scores.Deadline {
		pk.Scores = opts.Scores
	}
	pk.Unit = unit
	cutoff := formatScore(unit.Score(now.Add(-opts.OlderThan)))

	if opts.DryRun {
		pipe := rdb.Pipeline()
		stale := pipe.ZCount(ctx, t.Key, "-inf", cutoff)
		total := pipe.ZCard(ctx, t.Key)
		if err := execPipe(ctx, pipe); err != nil {
			return fail("ZCOUNT", err)
		}
		n, err := stale.Result()
		if err != nil {
			if rediserr.IsWrongType(err) {
				pk.Skipped = SkipNotSortedSet
				return pk, nil
			}
			return fail("ZCOUNT", err)
		}
		card, err := total.Result()
		if err != nil {
			return fail("ZCARD", err)
		}
		if card == 0 {
			pk.Skipped = SkipVanished
			return pk, nil
		}
		pk.Removed, pk.Remaining = n, card-n
		return pk, nil
	}

	for {
		if err := ctx.Err(); err != nil {
			return pk, err
		}
		// The call itself is not cancelled with ctx: a batch sent is a batch counted. The
		// client's own timeout still bounds it.
		reply, err := purgeStale.Run(context.WithoutCancel(ctx), rdb, []string{t.Key}, cutoff, opts.Batch).Int64Slice()
		if err != nil {
			if rediserr.IsWrongType(err) {
				pk.Skipped = SkipNotSortedSet
				return pk, nil
			}
			return fail("purge_stale", err)
		}
		if len(reply) != 3 {
			return fail("purge_stale", fmt.Errorf("unexpected reply %v (want removed, remaining_stale, remaining_total)", reply))
		}
		removed, staleLeft, total := reply[0], reply[1], reply[2]
		if removed == 0 && total == 0 {
			pk.Skipped, pk.Remaining = SkipVanished, 0 // deleted by someone else under our feet
			return pk, nil
		}
		pk.Removed += removed
		pk.Remaining = total
		if staleLeft == 0 {
			return pk, nil
		}
		if removed == 0 {
			return fail("purge_stale", fmt.Errorf("removed nothing while %d stale members remain", staleLeft))
		}
	}
}

// sampleMembers reads the members and scores at scores.SampleRanks of a set, lowest first: ZCARD, then one ZRANGE
// per rank, pipelined. Empty when the set is gone.
func sampleMembers(ctx context.Context, rdb redis.UniversalClient, key string) ([]redis.Z, error) {
	size, err := rdb.ZCard(ctx, key).Result()
	if err != nil || size == 0 {
		return nil, err
	}
	pipe := rdb.Pipeline()
	var cmds []*redis.ZSliceCmd
	for _, rank := range scores.SampleRanks(size) {
		cmds = append(cmds, pipe.ZRangeWithScores(ctx, key, rank, rank))
	}
	if err := execPipe(ctx, pipe); err != nil {
		return nil, err
	}
	var sampled []redis.Z
	for _, c := range cmds {
		zs, err := c.Result()
		if err != nil {
			return nil, err
		}
		sampled = append(sampled, zs...)
	}
	return sampled, nil
}

// binaryMember reports whether a member is a packed binary record rather than an id: control
// bytes or invalid UTF-8 (Redisson packs a length byte, random bytes and a 32-bit count).
func binaryMember(m string) bool {
	return !utf8.ValidString(m) || strings.ContainsFunc(m, unicode.IsControl)
}
