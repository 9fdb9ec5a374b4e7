package limiter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The client-side strategies share one decision per limiter, written as a step: reads, a
// decision made in Go, then writes. The strategies differ only in how the step reaches Redis.

// naive sends every command on its own: another client can act between the check and the update.
type naive struct{ base }

func (n *naive) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	st := n.newStep(key, now, false)
	if err := execErr(st.read(ctx, n.rdb)); err != nil {
		return Decision{}, err
	}
	d, write, err := st.decide()
	if err != nil || !write {
		return d, err
	}
	return d, execErr(st.write(ctx, n.rdb))
}

// multi wraps the reads in one MULTI/EXEC and the writes in another, with no WATCH: each
// block is atomic, but the decision between them still races.
type multi struct{ base }

func (m *multi) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	st := m.newStep(key, now, false)
	if _, err := m.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { st.read(ctx, p); return nil }); err != nil && err != redis.Nil {
		return Decision{}, err
	}
	d, write, err := st.decide()
	if err != nil || !write {
		return d, err
	}
	_, err = m.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { st.write(ctx, p); return nil })
	return d, err
}

// watch reads under WATCH and writes in MULTI/EXEC; if another client touched the key in
// between, EXEC aborts and the whole decision is made again.
type watch struct{ base }

func (w *watch) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	st := w.newStep(key, now, true)
	var d Decision
	for attempt := 0; attempt <= w.cfg.MaxRetries; attempt++ {
		err := w.rdb.Watch(ctx, func(tx *redis.Tx) error {
			if err := execErr(st.read(ctx, tx)); err != nil {
				return err
			}
			var write bool
			var err error
			if d, write, err = st.decide(); err != nil || !write {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { st.write(ctx, p); return nil })
			return err
		}, st.watched())
		if errors.Is(err, redis.TxFailedErr) {
			backoff(attempt)
			continue
		}
		d.Retries = attempt
		return d, err
	}
	return Decision{}, fmt.Errorf("watch: key %s changed on every one of %d attempts", key, w.cfg.MaxRetries+1)
}

// backoff spreads out retries of writers that keep colliding on one key.
func backoff(attempt int) {
	if attempt < 3 {
		return
	}
	time.Sleep(time.Duration(rand.Int64N(int64(min(attempt, 40)) * int64(50*time.Microsecond))))
}

// execErr returns the first error among commands that ran outside a pipeline.
func execErr(cmds []redis.Cmder) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil && err != redis.Nil {
			return err
		}
	}
	return nil
}

// step is one decision of one limiter, split so each strategy can deliver it its own way.
type step interface {
	read(ctx context.Context, c redis.Cmdable) []redis.Cmder
	// decide reads the replies; write says whether the writes must be sent.
	decide() (d Decision, write bool, err error)
	write(ctx context.Context, c redis.Cmdable) []redis.Cmder
	watched() string
}

func (b base) newStep(key string, now time.Time, underWatch bool) step {
	switch b.kind {
	case Concurrency:
		return &concurrencyStep{cfg: b.cfg, key: key, now: now.UnixMilli(), member: b.ids.id(), underWatch: underWatch}
	case FixedWindow:
		return &fixedWindowStep{cfg: b.cfg, key: WindowKey(key, now, b.cfg.Window)}
	case SlidingWindow:
		return &slidingWindowStep{cfg: b.cfg, key: key, now: now.UnixMilli(), member: b.ids.id(), underWatch: underWatch}
	default:
		return &tokenBucketStep{cfg: b.cfg, key: key, now: now.UnixMilli()}
	}
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

func (s *concurrencyStep) read(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	if s.underWatch {
		s.count = c.ZCount(ctx, s.key, "("+strconv.FormatInt(s.staleBefore(), 10), "+inf")
		return []redis.Cmder{s.count}
	}
	prune := c.ZRemRangeByScore(ctx, s.key, "-inf", strconv.FormatInt(s.staleBefore(), 10))
	s.count = c.ZCard(ctx, s.key)
	return []redis.Cmder{prune, s.count}
}

func (s *concurrencyStep) decide() (Decision, bool, error) {
	n, err := s.count.Result()
	if err != nil {
		return Decision{}, false, err
	}
	if n >= s.cfg.Limit {
		return Decision{Count: n}, false, nil
	}
	return Decision{Allowed: true, Count: n + 1, Member: s.member}, true, nil
}

func (s *concurrencyStep) write(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	var cmds []redis.Cmder
	if s.underWatch {
		cmds = append(cmds, c.ZRemRangeByScore(ctx, s.key, "-inf", strconv.FormatInt(s.staleBefore(), 10)))
	}
	return append(cmds,
		c.ZAdd(ctx, s.key, redis.Z{Score: float64(s.now), Member: s.member}),
		c.PExpire(ctx, s.key, s.cfg.StaleAfter))
}

func (s *concurrencyStep) watched() string { return s.key }

// fixedWindowStep: GET the window's counter, INCR it if below the limit.
type fixedWindowStep struct {
	cfg   Config
	key   string
	count *redis.StringCmd
	seen  int64
}

func (s *fixedWindowStep) read(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	s.count = c.Get(ctx, s.key)
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

func (s *fixedWindowStep) write(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	cmds := []redis.Cmder{c.Incr(ctx, s.key)}
	if s.seen == 0 {
		// Two windows, as in fixed_window.lua: late requests must still find their window's count.
		cmds = append(cmds, c.PExpire(ctx, s.key, 2*s.cfg.Window))
	}
	return cmds
}

func (s *fixedWindowStep) watched() string { return s.key }

// slidingWindowStep: prune the log, count the last window, add this request if below the limit.
type slidingWindowStep struct {
	cfg        Config
	key        string
	now        int64
	member     string
	underWatch bool
	count      *redis.IntCmd
}

func (s *slidingWindowStep) read(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	window := ms(s.cfg.Window)
	var cmds []redis.Cmder
	if !s.underWatch {
		cmds = append(cmds, c.ZRemRangeByScore(ctx, s.key, "-inf", strconv.FormatInt(s.now-2*window, 10)))
	}
	s.count = c.ZCount(ctx, s.key, "("+strconv.FormatInt(s.now-window, 10), "+inf")
	return append(cmds, s.count)
}

func (s *slidingWindowStep) decide() (Decision, bool, error) {
	n, err := s.count.Result()
	if err != nil {
		return Decision{}, false, err
	}
	if n >= s.cfg.Limit {
		return Decision{Count: n}, false, nil
	}
	return Decision{Allowed: true, Count: n + 1, Member: s.member}, true, nil
}

func (s *slidingWindowStep) write(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	window := ms(s.cfg.Window)
	var cmds []redis.Cmder
	if s.underWatch {
		cmds = append(cmds, c.ZRemRangeByScore(ctx, s.key, "-inf", strconv.FormatInt(s.now-2*window, 10)))
	}
	return append(cmds,
		c.ZAdd(ctx, s.key, redis.Z{Score: float64(s.now), Member: s.member}),
		c.PExpire(ctx, s.key, 2*s.cfg.Window))
}

func (s *slidingWindowStep) watched() string { return s.key }

// tokenBucketStep: read the bucket, refill and take in Go, write it back.
type tokenBucketStep struct {
	cfg   Config
	key   string
	now   int64
	state *redis.SliceCmd
	after bucketState
}

func (s *tokenBucketStep) read(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	s.state = c.HMGet(ctx, s.key, "tokens", "ts")
	return []redis.Cmder{s.state}
}

func (s *tokenBucketStep) decide() (Decision, bool, error) {
	vals, err := s.state.Result()
	if err != nil {
		return Decision{}, false, err
	}
	before, ok := parseBucket(vals)
	if !ok {
		before = bucketState{tokens: float64(s.cfg.Burst), ts: s.now}
	}
	var allowed bool
	var retry int64
	s.after, allowed, retry = takeTokens(before, s.cfg.Rate, float64(s.cfg.Burst), s.now, float64(s.cfg.Cost))
	return Decision{Allowed: allowed, Count: int64(math.Floor(s.after.tokens)), RetryAfter: time.Duration(retry) * time.Millisecond}, true, nil
}

func (s *tokenBucketStep) write(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	return []redis.Cmder{
		c.HSet(ctx, s.key, "tokens", strconv.FormatFloat(s.after.tokens, 'g', 17, 64), "ts", s.after.ts),
		c.PExpire(ctx, s.key, BucketTTL(s.cfg.Rate, s.cfg.Burst)),
	}
}

func (s *tokenBucketStep) watched() string { return s.key }

type bucketState struct {
	tokens float64
	ts     int64
}

func parseBucket(vals []any) (bucketState, bool) {
	if len(vals) != 2 {
		return bucketState{}, false
	}
	ts, ok1 := vals[1].(string)
	tok, ok2 := vals[0].(string)
	if !ok1 || !ok2 {
		return bucketState{}, false
	}
	t, err1 := strconv.ParseFloat(tok, 64)
	n, err2 := strconv.ParseFloat(ts, 64)
	if err1 != nil || err2 != nil {
		return bucketState{}, false
	}
	return bucketState{tokens: t, ts: int64(n)}, true
}

// takeTokens is token_bucket.lua in Go: refill forward in time only, then take cost if there.
func takeTokens(b bucketState, rate, burst float64, now int64, cost float64) (after bucketState, allowed bool, retryMs int64) {
	if now > b.ts {
		b.tokens = math.Min(burst, b.tokens+float64(now-b.ts)*rate/1000)
		b.ts = now
	}
	if b.tokens >= cost {
		b.tokens -= cost
		return b, true, 0
	}
	return b, false, int64(math.Ceil((cost - b.tokens) * 1000 / rate))
}

// BucketTTL is how long an idle bucket lives: long enough to refill completely, after which a
// missing bucket and a full one mean the same.
func BucketTTL(rate float64, burst int64) time.Duration {
	return time.Duration(math.Ceil(float64(burst)*1000/rate)+1000) * time.Millisecond
}
