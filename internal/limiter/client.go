package limiter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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
	if err := txErr(m.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { st.read(ctx, p); return nil })); err != nil && err != redis.Nil {
		return Decision{}, err
	}
	d, write, err := st.decide()
	if err != nil || !write {
		return d, err
	}
	return d, txErr(m.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { st.write(ctx, p); return nil }))
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
			return txErr(tx.TxPipelined(ctx, func(p redis.Pipeliner) error { st.write(ctx, p); return nil }))
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

// txErr replaces EXEC's bare EXECABORT with the reason Redis refused a queued command (NOPERM
// for an ACL user, OOM), which is what the user needs to read.
func txErr(cmds []redis.Cmder, err error) error {
	if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		return err
	}
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && cerr != redis.Nil && !strings.HasPrefix(cerr.Error(), "EXECABORT") {
			return cerr
		}
	}
	return err
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
	return admitBelow(s.count, s.cfg.Limit, s.member)
}

// admitBelow admits the request (adding member) when the counted members are below the limit.
func admitBelow(count *redis.IntCmd, limit int64, member string) (Decision, bool, error) {
	n, err := count.Result()
	if err != nil {
		return Decision{}, false, err
	}
	if n >= limit {
		return Decision{Count: n}, false, nil
	}
	return Decision{Allowed: true, Count: n + 1, Member: member}, true, nil
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
	return admitBelow(s.count, s.cfg.Limit, s.member)
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

// tokenBucketStep: read the bucket's theoretical arrival time, decide in Go, write it back.
type tokenBucketStep struct {
	cfg     Config
	key     string
	now     int64
	tat     *redis.StringCmd
	newTat  float64
	allowed bool
}

func (s *tokenBucketStep) read(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	s.tat = c.HGet(ctx, s.key, "tat")
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

func (s *tokenBucketStep) write(ctx context.Context, c redis.Cmdable) []redis.Cmder {
	ttl := time.Duration(math.Ceil(s.newTat-float64(s.now))+1000) * time.Millisecond
	return []redis.Cmder{
		c.HSet(ctx, s.key, "tat", strconv.FormatFloat(s.newTat, 'g', 17, 64)),
		c.PExpire(ctx, s.key, ttl),
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
