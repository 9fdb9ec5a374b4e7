package limiter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/kind/held"
)

// concurrency is an in-flight semaphore on a sorted set: members are request ids scored by
// their start, an admitted request holds its member until its release removes it, and members
// older than stale-after are reclaimed as abandoned.
var concurrency = Description{
	Kind: Concurrency, Limits: "in-flight requests", Script: "concurrency_acquire",
	Contract:   contract.Spec{Keys: "{key}", Args: shippedArgs("concurrency_acquire"), Release: "ZREM {key} {member}"},
	Strategies: Strategies(), Model: held.Model, Releases: true, DefaultHold: 2 * time.Millisecond, Skew: fewMilliseconds,
	Commands: []string{"zremrangebyscore", "zcard", "zadd", "pexpire"},
	Inspect:  "concurrency", CountLabel: "in-flight", ChartLabel: "in-flight",
	member: true,
	validate: func(c Config) error {
		if err := validLimit(c); err != nil {
			return err
		}
		if c.StaleAfter <= 0 {
			return fmt.Errorf("stale-after must be positive, got %s", c.StaleAfter)
		}
		return nil
	},
	step: func(b base, key string, now time.Time, underWatch bool) step {
		return &concurrencyStep{cfg: b.cfg, key: key, now: now.UnixMilli(), member: b.ids.id(), underWatch: underWatch}
	},
	args: func(c Config, keys []string, argv []any, key string, now time.Time, member string) ([]string, []any) {
		old := argv[:cap(argv)]
		return append(keys[:0], key), append(argv[:0], reboxed(old, 0, c.Limit), reboxed(old, 1, now.UnixMilli()), reboxed(old, 2, ms(c.StaleAfter)), reboxedText(old, 3, member))
	},
	replyLen: 2,
}

// concurrencyStep: reclaim stale members, count, add this request if below the limit.
type concurrencyStep struct {
	cfg        Config
	key        string
	now        int64
	member     string
	underWatch bool // a write under WATCH would abort our own transaction, so prune in MULTI instead
	count      *redis.IntCmd
}

func (s *concurrencyStep) staleBefore() int64 { return s.now - ms(s.cfg.StaleAfter) }

func (s *concurrencyStep) read(ctx context.Context) []redis.Cmder {
	if s.underWatch {
		s.count = redis.NewIntCmd(ctx, "zcount", s.key, "("+strconv.FormatInt(s.staleBefore(), 10), "+inf")
		return []redis.Cmder{s.count}
	}
	prune := redis.NewIntCmd(ctx, "zremrangebyscore", s.key, "-inf", strconv.FormatInt(s.staleBefore(), 10))
	s.count = redis.NewIntCmd(ctx, "zcard", s.key)
	return []redis.Cmder{prune, s.count}
}

func (s *concurrencyStep) decide() (Decision, bool, error) {
	return admitBelow(s.count, s.cfg.Limit, s.member)
}

func (s *concurrencyStep) write(ctx context.Context) []redis.Cmder {
	var cmds []redis.Cmder
	if s.underWatch {
		cmds = append(cmds, redis.NewIntCmd(ctx, "zremrangebyscore", s.key, "-inf", strconv.FormatInt(s.staleBefore(), 10)))
	}
	return append(cmds,
		redis.NewIntCmd(ctx, "zadd", s.key, s.now, s.member),
		pexpire(ctx, s.key, s.cfg.StaleAfter))
}

func (s *concurrencyStep) watched() string { return s.key }
