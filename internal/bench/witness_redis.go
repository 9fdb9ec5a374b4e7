package bench

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisWitness keeps the concurrency witness in Redis (INCR after an admit, DECR before the
// release), so several hammer processes driving one limiter share one witness and can still
// prove overshoot. The peak is what any INCR of this process saw.
type RedisWitness struct {
	*Witness
	rdb     redis.Cmdable
	key     string
	timeout time.Duration
}

// NewRedisWitness returns a witness kept on key (which should share the limiter key's hash tag).
func NewRedisWitness(rdb redis.Cmdable, key string, limit int64, timeout time.Duration) *RedisWitness {
	return &RedisWitness{Witness: NewWitness(limit), rdb: rdb, key: key, timeout: timeout}
}

// Admit implements Checker.
func (w *RedisWitness) Admit(int64) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	n, err := w.incr(ctx)
	w.inFlight.Add(1)
	if err != nil {
		return
	}
	w.observe(n)
}

// Release implements Checker.
func (w *RedisWitness) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	w.decr(ctx)
	w.inFlight.Add(-1)
}

// Probe sends the witness's commands once (INCR, EXPIRE, DECR) and returns the first error: the
// run checks up front that the user may run them, since Admit and Release cannot report.
func (w *RedisWitness) Probe(ctx context.Context) error {
	if _, err := w.incr(ctx); err != nil {
		return err
	}
	return w.decr(ctx)
}

func (w *RedisWitness) incr(ctx context.Context) (int64, error) {
	var incr *redis.IntCmd
	_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, w.key)
		p.Expire(ctx, w.key, time.Hour) // an abandoned witness must not live forever either
		return nil
	})
	return incr.Val(), err
}

func (w *RedisWitness) decr(ctx context.Context) error { return w.rdb.Decr(ctx, w.key).Err() }
