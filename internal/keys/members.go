package keys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/keys/scores"
)

// ErrNoSuchKey is returned for a named key that does not exist.
var ErrNoSuchKey = errors.New("no such key")

// ErrNotSortedSet is returned when members are asked of a key that is not a sorted set.
var ErrNotSortedSet = errors.New("not a sorted set")

// MembersOptions choose which members to list.
type MembersOptions struct {
	Top    int64         // the oldest Top members (0: all of them)
	Stale  time.Duration // members at least this old are marked stale (0: none)
	Unit   scores.Unit
	Scores scores.Mode // what the scores mean; "" or scores.ModeAuto guesses
	Clock  Clock
}

// Member is one sorted-set member with its score read as a time (its JSON: json.go).
type Member struct {
	Member string
	Score  float64
	Time   *time.Time     // nil when the scores are not timestamps
	Age    *time.Duration // nil likewise
	Stale  bool
}

// MemberList is the members of one sorted set, oldest first: what inspect --members prints as
// JSON, as its Table and with its Notes.
type MemberList struct {
	Now     time.Time   `json:"-"`
	Key     string      `json:"key"`
	Node    string      `json:"node"`
	Size    int64       `json:"size"`           // every member of the set, listed or not
	Unit    scores.Unit `json:"score_unit"`     // "" (null) when the scores are not timestamps
	Scores  scores.Mode `json:"scores"`         // start or deadline; "" (null) when the scores are not timestamps
	Guessed bool        `json:"scores_guessed"` // Scores was guessed by --scores auto
	Members []Member    `json:"members"`
	// Stale is the age from which a member counts as stale (--stale); 0 judges none.
	Stale time.Duration `json:"-"`
}

// Members lists the oldest members of a sorted set (lowest scores first) with their times and
// ages. It reads with ZCARD and ZRANGE only.
func Members(ctx context.Context, rdb redis.UniversalClient, key string, opts MembersOptions) (MemberList, error) {
	now, err := opts.Clock(ctx)
	if err != nil {
		return MemberList{}, err
	}
	node, err := masterFor(ctx, rdb, key)
	if err != nil {
		return MemberList{}, err
	}
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return MemberList{}, fmt.Errorf("%s on %s: TYPE: %w", key, node, err)
	}
	switch typ {
	case "none":
		return MemberList{}, fmt.Errorf("%s: %w", key, ErrNoSuchKey)
	case "zset":
	default:
		return MemberList{}, fmt.Errorf("%s is a %s: %w: --members lists sorted-set members; inspect the key without --members", key, typ, ErrNotSortedSet)
	}
	list := MemberList{Now: now, Key: key, Node: node, Members: []Member{}, Stale: opts.Stale}
	pipe := rdb.Pipeline()
	size := pipe.ZCard(ctx, key)
	newest := pipe.ZRangeWithScores(ctx, key, -1, -1)
	oldest := pipe.ZRangeWithScores(ctx, key, 0, opts.Top-1)
	if err := execPipe(ctx, pipe); err != nil {
		return MemberList{}, err
	}
	if list.Size, err = size.Result(); err != nil {
		return MemberList{}, fmt.Errorf("%s on %s: ZCARD: %w", key, node, err)
	}
	zs, err := oldest.Result()
	if err != nil {
		return MemberList{}, fmt.Errorf("%s on %s: ZRANGE: %w", key, node, err)
	}
	top, err := newest.Result()
	if err != nil {
		return MemberList{}, fmt.Errorf("%s on %s: ZRANGE: %w", key, node, err)
	}
	if len(top) == 0 {
		return MemberList{}, fmt.Errorf("%s: %w", key, ErrNoSuchKey) // deleted since TYPE
	}
	samples := []float64{top[0].Score}
	if len(zs) > 0 {
		samples = []float64{zs[0].Score, top[0].Score}
	}
	rd, ok := scores.Read(samples, now, opts.Unit, opts.Scores)
	unit := rd.Unit
	if ok {
		list.Unit, list.Scores, list.Guessed = rd.Unit, rd.Mode, rd.Guessed
	}
	for _, z := range zs {
		m := Member{Member: memberString(z.Member), Score: z.Score}
		if ok {
			if at, ok := unit.Time(z.Score); ok {
				age := now.Sub(at)
				m.Time, m.Age = &at, &age
				m.Stale = opts.Stale > 0 && age >= opts.Stale
			}
		}
		list.Members = append(list.Members, m)
	}
	return list, nil
}
