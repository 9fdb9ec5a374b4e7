package limiter

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/kind/slidingcounter"
)

// SlidingWindowCounter is the two-counter estimate of a sliding window.
const SlidingWindowCounter Kind = slidingcounter.Name

// slidingWindowCounter counts on one counter per epoch-aligned window, named by the window's
// index (<key>:<now_ms // window_ms>), and admits while this window's count plus the previous
// window's, weighted by the share of it still inside the sliding window and floored, stays below
// the limit (upstash's slidingWindow); a counter lives two windows, so the next window still reads
// it as its previous.
var slidingWindowCounter = Description{
	Kind: SlidingWindowCounter, Limits: "requests per window", MinLimit: 1, Script: "sliding_window_counter",
	Contract:   contract.Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: shippedArgs("sliding_window_counter")},
	Strategies: []Strategy{Naive, Lua, Eval, Function, Custom}, Model: slidingcounter.Model,
	Bursty: true, Skew: fewMilliseconds, WeighsFraction: true,
	Commands: []string{"get", "incr", "pttl", "pexpire"},
	Inspect:  "sliding_counter", CountLabel: "in window", ChartLabel: "per-window count",
	windowKey: counterKey, windowSuffix: isWindowStart,
	validate: validWindow,
	step: func(b base, key string, now time.Time, _ bool) step {
		return &twoCounterStep{cfg: b.cfg, key: counterKey(key, now, b.cfg.Window), previous: counterKey(key, now.Add(-b.cfg.Window), b.cfg.Window), now: now}
	},
	args: func(c Config, keys []string, argv []any, key string, now time.Time, _ string) ([]string, []any) {
		oldKeys, old := keys[:cap(keys)], argv[:cap(argv)]
		index := now.UnixMilli() / c.Window.Milliseconds()
		return append(keys[:0], counterAgain(oldKeys, 0, key, index), counterAgain(oldKeys, 1, key, index-1)),
			append(argv[:0], reboxed(old, 0, c.Limit), reboxed(old, 1, now.UnixMilli()), reboxed(old, 2, ms(c.Window)))
	},
	replyLen: 2,
}

// counterKey is the two-counter limiter's counter for the window that holds now: the window's
// index (now_ms // window_ms) is part of the name.
func counterKey(key string, now time.Time, window time.Duration) string {
	return counterAgain(nil, 0, key, now.UnixMilli()/window.Milliseconds())
}

// counterAgain is key's counter of window index, the one in old[i] when it names it already (a
// batch's call in the same window, as a run on a few keys makes): named without allocating again.
func counterAgain(old []string, i int, key string, index int64) string {
	var buf [96]byte
	name := strconv.AppendInt(append(append(buf[:0], key...), ':'), index, 10)
	if i < len(old) && old[i] == string(name) {
		return old[i]
	}
	return string(name)
}

// twoCounterStep: GET this window's counter and the previous one's, decide as the script does,
// INCR this window's counter if admitted: two requests that read before either writes both pass.
type twoCounterStep struct {
	cfg           Config
	key, previous string
	now           time.Time
	count, prev   *redis.StringCmd
	seen          int64
}

func (s *twoCounterStep) read(ctx context.Context) []redis.Cmder {
	s.count, s.prev = redis.NewStringCmd(ctx, "get", s.key), redis.NewStringCmd(ctx, "get", s.previous)
	return []redis.Cmder{s.count, s.prev}
}

func (s *twoCounterStep) decide() (Decision, bool, error) {
	current, err := counted(s.count)
	if err != nil {
		return Decision{}, false, err
	}
	previous, err := counted(s.prev)
	if err != nil {
		return Decision{}, false, err
	}
	s.seen = current
	w := s.cfg.Window.Milliseconds()
	weighted := previous * (w - s.now.UnixMilli()%w) / w // floored, as the script's
	if current+weighted >= s.cfg.Limit {
		return Decision{Count: current + weighted}, false, nil
	}
	return Decision{Allowed: true, Count: current + 1 + weighted}, true, nil
}

func (s *twoCounterStep) write(ctx context.Context) []redis.Cmder {
	cmds := []redis.Cmder{redis.NewIntCmd(ctx, "incr", s.key)}
	if s.seen == 0 {
		// Two windows, as the script: the next window reads this one as its previous.
		cmds = append(cmds, pexpire(ctx, s.key, 2*s.cfg.Window))
	}
	return cmds
}

func (s *twoCounterStep) watched() string { return s.key }

// counted is a counter read by GET: 0 when the key does not exist.
func counted(c *redis.StringCmd) (int64, error) {
	n, err := c.Int64()
	if err == redis.Nil {
		return 0, nil
	}
	return n, err
}
