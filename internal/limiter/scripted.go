package limiter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/scripts"
)

// scripted runs the limiter's Lua script: the shipped one (lua, eval, function, lua-ts-member)
// or the caller's (custom). The whole decision happens inside Redis, atomically.
type scripted struct {
	base
	strategy Strategy
	script   *redis.Script
	fn       string // function strategy: the FCALL name
}

func newScripted(b base, s Strategy) *scripted {
	src := shippedScript(b.kind)
	if s == Custom {
		src = b.cfg.CustomSource
	}
	sc := &scripted{base: b, strategy: s, script: redis.NewScript(src)}
	if s == Function {
		name, _ := scripts.Lookup(scriptName(b.kind))
		sc.fn = name.FunctionName()
	}
	return sc
}

func scriptName(k Kind) string {
	switch k {
	case Concurrency:
		return "concurrency_acquire"
	case FixedWindow:
		return "fixed_window"
	case SlidingWindow:
		return "sliding_window"
	default:
		return "token_bucket"
	}
}

func shippedScript(k Kind) string {
	s, _ := scripts.Lookup(scriptName(k))
	return s.Source
}

// ScriptFor returns the shipped script a limiter runs.
func ScriptFor(k Kind) scripts.Script {
	s, _ := scripts.Lookup(scriptName(k))
	return s
}

func (s *scripted) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	var d Decision
	nowMs := now.UnixMilli()
	var keys []string
	var args []any
	switch s.kind {
	case Concurrency:
		d.Member = s.member(nowMs)
		keys, args = []string{key}, []any{s.cfg.Limit, nowMs, ms(s.cfg.StaleAfter), d.Member}
	case FixedWindow:
		keys, args = []string{WindowKey(key, now, s.cfg.Window)}, []any{s.cfg.Limit, ms(s.cfg.Window)}
	case SlidingWindow:
		d.Member = s.member(nowMs)
		keys, args = []string{key}, []any{s.cfg.Limit, nowMs, ms(s.cfg.Window), d.Member}
	case TokenBucket:
		keys, args = []string{key}, []any{formatFloat(s.cfg.Rate), s.cfg.Burst, nowMs, s.cfg.Cost}
	}
	reply, err := s.run(ctx, keys, args)
	if err != nil {
		return Decision{}, err
	}
	want := 2
	if s.kind == FixedWindow || s.kind == TokenBucket {
		want = 3
	}
	vals, err := int64s(reply, want)
	if err != nil {
		return Decision{}, fmt.Errorf("%s script reply: %w", s.kind, err)
	}
	d.Allowed = vals[0] == 1
	d.Count = vals[1]
	switch s.kind {
	case FixedWindow:
		d.TTL = time.Duration(vals[2]) * time.Millisecond
	case TokenBucket:
		d.RetryAfter = time.Duration(vals[2]) * time.Millisecond
	}
	if !d.Allowed {
		d.Member = ""
	}
	return d, nil
}

func (s *scripted) member(nowMs int64) string {
	if s.strategy == LuaTSMember {
		return strconv.FormatInt(nowMs, 10)
	}
	return s.ids.id()
}

func (s *scripted) run(ctx context.Context, keys []string, args []any) (any, error) {
	switch s.strategy {
	case Eval:
		return s.script.Eval(ctx, s.rdb, keys, args...).Result()
	case Function:
		reply, err := s.rdb.FCall(ctx, s.fn, keys, args...).Result()
		if err != nil && isFunctionMissing(err) {
			if err := scriptcache.InstallLibrary(ctx, s.rdb); err != nil {
				return nil, err
			}
			reply, err = s.rdb.FCall(ctx, s.fn, keys, args...).Result()
		}
		return reply, err
	default:
		// EVALSHA, and on NOSCRIPT (cache flushed, restart, failover) EVAL, which caches it again.
		return s.script.Run(ctx, s.rdb, keys, args...).Result()
	}
}

func isFunctionMissing(err error) bool {
	return strings.Contains(err.Error(), "Function not found")
}

// int64s decodes a script reply that must be an array of at least n integers.
func int64s(reply any, n int) ([]int64, error) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("want an array of %d integers, got %s", n, describe(reply))
	}
	if len(arr) < n {
		return nil, fmt.Errorf("want an array of %d integers, got %d elements", n, len(arr))
	}
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		v, ok := arr[i].(int64)
		if !ok {
			return nil, fmt.Errorf("element %d: want an integer, got %s", i+1, describe(arr[i]))
		}
		out[i] = v
	}
	return out, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return fmt.Sprintf("string %q", x)
	default:
		return fmt.Sprintf("%T", v)
	}
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
