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
	var incr *redis.IntCmd
	_, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, w.key)
		p.Expire(ctx, w.key, time.Hour) // an abandoned witness must not live forever either
		return nil
	})
	w.inFlight.Add(1)
	if err != nil {
		return
	}
	w.observe(incr.Val())
}

// Release implements Checker.
func (w *RedisWitness) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	w.rdb.Decr(ctx, w.key)
	w.inFlight.Add(-1)
}
