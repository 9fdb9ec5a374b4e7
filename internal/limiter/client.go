package limiter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
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
	if !rediserr.IsExecAbort(err) {
		return err
	}
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && cerr != redis.Nil && !rediserr.IsExecAbort(cerr) {
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
	return b.kind.step(b, key, now, underWatch)
}
