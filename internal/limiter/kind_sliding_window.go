package limiter

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/kind/sliding"
)

// slidingWindow keeps a log of admitted requests on a sorted set (request ids scored by their
// now) and admits while fewer than the limit fall in the last window; the log keeps two
// windows, so a late request still finds its window's admits.
var slidingWindow = Description{
	Kind: SlidingWindow, Limits: "requests per window", Script: "sliding_window",
	Contract:   contract.Spec{Keys: "{key}", Args: shippedArgs("sliding_window")},
	Strategies: Strategies(), Model: sliding.Model, Bursty: true, Skew: fewMilliseconds,
	Commands: []string{"zremrangebyscore", "zcount", "zadd", "pexpire"},
	Inspect:  "window_log", CountLabel: "in window", ChartLabel: "per-window count",
	member:   true,
	validate: validWindow,
	step: func(b base, key string, now time.Time, underWatch bool) step {
		return &slidingWindowStep{cfg: b.cfg, key: key, now: now.UnixMilli(), member: b.ids.id(), underWatch: underWatch}
	},
	args: func(c Config, keys []string, argv []any, key string, now time.Time, member string) ([]string, []any) {
		old := argv[:cap(argv)]
		return append(keys[:0], key), append(argv[:0], reboxed(old, 0, c.Limit), reboxed(old, 1, now.UnixMilli()), reboxed(old, 2, ms(c.Window)), reboxedText(old, 3, member))
	},
	replyLen: 2,
}

// slidingWindowStep: prune the log, count the last window, add this request if below the limit.
type slidingWindowStep struct {
	cfg        Config
	key        string
	now        int64
	member     string
	underWatch bool
	count      *redis.IntCmd
}

func (s *slidingWindowStep) read(ctx context.Context) []redis.Cmder {
	window := ms(s.cfg.Window)
	var cmds []redis.Cmder
	if !s.underWatch {
		cmds = append(cmds, redis.NewIntCmd(ctx, "zremrangebyscore", s.key, "-inf", strconv.FormatInt(s.now-2*window, 10)))
	}
	s.count = redis.NewIntCmd(ctx, "zcount", s.key, "("+strconv.FormatInt(s.now-window, 10), "+inf")
	return append(cmds, s.count)
}

func (s *slidingWindowStep) decide() (Decision, bool, error) {
	return admitBelow(s.count, s.cfg.Limit, s.member)
}

func (s *slidingWindowStep) write(ctx context.Context) []redis.Cmder {
	window := ms(s.cfg.Window)
	var cmds []redis.Cmder
	if s.underWatch {
		cmds = append(cmds, redis.NewIntCmd(ctx, "zremrangebyscore", s.key, "-inf", strconv.FormatInt(s.now-2*window, 10)))
	}
	return append(cmds,
		redis.NewIntCmd(ctx, "zadd", s.key, s.now, s.member),
		pexpire(ctx, s.key, 2*s.cfg.Window))
}

func (s *slidingWindowStep) watched() string { return s.key }
