package limiter

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/kind/bucket"
)

// tokenBucket is a bucket of burst tokens refilled at rate per second, kept as the theoretical
// arrival time of the next token (GCRA) in a hash field tat.
var tokenBucket = Description{
	Kind: TokenBucket, Limits: "the bucket's burst", MinLimit: 1, Script: "token_bucket",
	Contract:   contract.Spec{Keys: "{key}", Args: shippedArgs("token_bucket")},
	Strategies: []Strategy{Naive, Multi, Watch, Lua, Eval, Function, Custom}, Model: bucket.Model, Bursty: true,
	// A sixteenth of the time one token takes to refill (3.125ms at 20 per second), at least 1ms
	// and at most 5ms: the bucket's evidence forgives twice the skew's worth of refill, and a
	// round trip's (bench/clock_evidence.go), which must stay well under one token for a bucket one
	// request too large to be proven; and the workers' clocks, alternately behind and ahead
	// (bench.workerSkew), step back by up to twice the skew between calls a burst admits one
	// after another, so a bucket that refills across a backwards step gains a token within a
	// burst of 20 even when only its admits move its clock (lua-resty-redis-ratelimit's abs),
	// which a skew of a millisecond cannot make it do.
	Skew: func(limit int64, window time.Duration) time.Duration {
		if limit < 1 {
			return time.Millisecond
		}
		return min(5*time.Millisecond, max(time.Millisecond, window/time.Duration(limit)/16))
	},
	Commands: []string{"hget", "hset", "pexpire"},
	// token_bucket.lua keeps GCRA state: a tat field.
	Inspect: "gcra", CountLabel: "in window", ChartLabel: "per-window count",
	validate: func(c Config) error {
		switch {
		case c.Rate <= 0:
			return fmt.Errorf("rate must be positive, got %g", c.Rate)
		case c.Burst < 1:
			return fmt.Errorf("burst must be at least 1, got %d", c.Burst)
		case c.Cost < 0:
			return fmt.Errorf("cost must be 0 or more, got %d", c.Cost)
		}
		return nil
	},
	step: func(b base, key string, now time.Time, _ bool) step {
		return &tokenBucketStep{cfg: b.cfg, key: key, now: now.UnixMilli()}
	},
	args: func(c Config, keys []string, argv []any, key string, now time.Time, _ string) ([]string, []any) {
		old := argv[:cap(argv)]
		return append(keys[:0], key), append(argv[:0], reboxedText(old, 0, formatFloat(c.Rate)), reboxed(old, 1, c.Burst), reboxed(old, 2, now.UnixMilli()), reboxed(old, 3, c.Cost))
	},
	replyLen: 3,
	readReply: func(d Decision, vals [maxReplyLen]int64) Decision {
		d.RetryAfter = time.Duration(vals[2]) * time.Millisecond
		return d
	},
}

// tokenBucketStep: read the bucket's theoretical arrival time, decide in Go, write it back.
type tokenBucketStep struct {
	cfg     Config
	key     string
	now     int64
	tat     *redis.StringCmd
	newTat  float64
	allowed bool
}

func (s *tokenBucketStep) read(ctx context.Context) []redis.Cmder {
	s.tat = redis.NewStringCmd(ctx, "hget", s.key, "tat")
	return []redis.Cmder{s.tat}
}

func (s *tokenBucketStep) decide() (Decision, bool, error) {
	tat, err := s.tat.Float64()
	if err == redis.Nil {
		tat, err = float64(s.now), nil
	}
	if err != nil {
		return Decision{}, false, err
	}
	g := gcra(tat, s.cfg.Rate, float64(s.cfg.Burst), float64(s.now), float64(s.cfg.Cost))
	s.newTat, s.allowed = g.newTat, g.allowed
	return Decision{Allowed: g.allowed, Count: g.remaining, RetryAfter: time.Duration(g.retryMs) * time.Millisecond}, g.allowed, nil
}

func (s *tokenBucketStep) write(ctx context.Context) []redis.Cmder {
	ttl := time.Duration(math.Ceil(s.newTat-float64(s.now))+1000) * time.Millisecond
	return []redis.Cmder{
		redis.NewIntCmd(ctx, "hset", s.key, "tat", strconv.FormatFloat(s.newTat, 'g', 17, 64)),
		pexpire(ctx, s.key, ttl),
	}
}

func (s *tokenBucketStep) watched() string { return s.key }

type gcraResult struct {
	allowed   bool
	newTat    float64
	remaining int64
	retryMs   int64
}

// gcra is token_bucket.lua in Go: the bucket as the theoretical arrival time of the next token.
func gcra(tat, rate, burst, now, cost float64) gcraResult {
	interval := 1000 / rate
	if tat < now {
		tat = now
	}
	newTat := tat + cost*interval
	allowAt := newTat - burst*interval
	if now < allowAt {
		return gcraResult{
			remaining: int64(math.Max(0, math.Floor((now-(tat-burst*interval))/interval))),
			retryMs:   int64(math.Ceil(allowAt - now)),
		}
	}
	return gcraResult{allowed: true, newTat: newTat, remaining: int64(math.Floor((now - allowAt) / interval))}
}
