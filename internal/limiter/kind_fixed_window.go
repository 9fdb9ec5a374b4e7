package limiter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/kind/fixed"
)

// fixedWindow counts requests on one counter per epoch-aligned window: the window's start is
// part of the counter's name (WindowKey), and the counter expires two windows after it starts.
var fixedWindow = Description{
	Kind: FixedWindow, Limits: "requests per window", Script: "fixed_window",
	// The window's start is part of the key, as WindowKey names it.
	Contract:   contract.Spec{Keys: "{key}:{window_start_ms}", Args: shippedArgs("fixed_window")},
	Strategies: []Strategy{Naive, Multi, Watch, Lua, Eval, Function, Custom}, Model: fixed.Model,
	Bursty: true, Skew: fewMilliseconds,
	Commands: []string{"get", "incr", "pttl", "pexpire"},
	Inspect:  "counter", CountLabel: "in window", ChartLabel: "per-window count",
	windowKey: WindowKey, windowSuffix: isWindowStart,
	validate: validWindow,
	step: func(b base, key string, now time.Time, _ bool) step {
		return &fixedWindowStep{cfg: b.cfg, key: WindowKey(key, now, b.cfg.Window)}
	},
	args: func(c Config, keys []string, argv []any, key string, now time.Time, _ string) ([]string, []any) {
		oldKeys, old := keys[:cap(keys)], argv[:cap(argv)]
		return append(keys[:0], windowKeyAgain(oldKeys, key, now, c.Window)), append(argv[:0], reboxed(old, 0, c.Limit), reboxed(old, 1, ms(c.Window)))
	},
	replyLen: 3,
	readReply: func(d Decision, vals [maxReplyLen]int64) Decision {
		d.TTL = time.Duration(vals[2]) * time.Millisecond
		return d
	},
}

// WindowKey is the fixed-window counter for the window that holds now: the window's start in
// milliseconds is part of the name, so each window counts on its own key.
func WindowKey(key string, now time.Time, window time.Duration) string {
	w := window.Milliseconds()
	// One allocation, the name itself: the hammer names a window on every decision.
	var buf [96]byte
	return string(strconv.AppendInt(append(append(buf[:0], key...), ':'), now.UnixMilli()/w*w, 10))
}

// windowKeyAgain is WindowKey(key, now, window), the one in old[0] when it names it already
// (a batch's call in the same place, on the same key and window, as a run on a few keys
// makes): named without allocating it again.
func windowKeyAgain(old []string, key string, now time.Time, window time.Duration) string {
	w := window.Milliseconds()
	var buf [96]byte
	name := strconv.AppendInt(append(append(buf[:0], key...), ':'), now.UnixMilli()/w*w, 10)
	if len(old) > 0 && old[0] == string(name) {
		return old[0]
	}
	return string(name)
}

// isWindowStart recognises what WindowKey appends to a key: a window start in milliseconds.
func isWindowStart(suffix string) bool {
	if suffix == "" {
		return false
	}
	for _, c := range suffix {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validWindow is the check of the window limiters' Config.
func validWindow(c Config) error {
	if err := validLimit(c); err != nil {
		return err
	}
	if c.Window < time.Millisecond {
		return fmt.Errorf("window must be at least 1ms, got %s", c.Window)
	}
	return nil
}

// fixedWindowStep: GET the window's counter, INCR it if below the limit.
type fixedWindowStep struct {
	cfg   Config
	key   string
	count *redis.StringCmd
	seen  int64
}

func (s *fixedWindowStep) read(ctx context.Context) []redis.Cmder {
	s.count = redis.NewStringCmd(ctx, "get", s.key)
	return []redis.Cmder{s.count}
}

func (s *fixedWindowStep) decide() (Decision, bool, error) {
	n, err := s.count.Int64()
	if err == redis.Nil {
		n, err = 0, nil
	}
	if err != nil {
		return Decision{}, false, err
	}
	s.seen = n
	if n >= s.cfg.Limit {
		return Decision{Count: n}, false, nil
	}
	return Decision{Allowed: true, Count: n + 1}, true, nil
}

func (s *fixedWindowStep) write(ctx context.Context) []redis.Cmder {
	cmds := []redis.Cmder{redis.NewIntCmd(ctx, "incr", s.key)}
	if s.seen == 0 {
		// Two windows, as in fixed_window.lua: late requests must still find their window's count.
		cmds = append(cmds, pexpire(ctx, s.key, 2*s.cfg.Window))
	}
	return cmds
}

func (s *fixedWindowStep) watched() string { return s.key }
