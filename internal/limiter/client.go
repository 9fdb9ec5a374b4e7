package limiter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/trace"
)

// The client-side strategies share one decision per limiter, written as a step: reads, a
// decision made in Go, then writes. The strategies differ only in how the step reaches Redis.

// naive sends every command on its own: another client can act between the check and the update.
type naive struct{ base }

func (n *naive) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	rec := trace.From(ctx)
	st := n.newStep(key, now, false)
	if err := execErr(sendEach(ctx, n.rdb, rec, st.read(ctx))); err != nil {
		return Decision{}, err
	}
	d, write, err := st.decide()
	if err != nil || !write {
		return d, err
	}
	return d, execErr(sendEach(ctx, n.rdb, rec, st.write(ctx)))
}

// multi wraps the reads in one MULTI/EXEC and the writes in another, with no WATCH: each
// block is atomic, but the decision between them still races.
type multi struct{ base }

func (m *multi) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	rec := trace.From(ctx)
	st := m.newStep(key, now, false)
	if err := txErr(sendTx(ctx, m.rdb, rec, st.read(ctx))); err != nil && err != redis.Nil {
		return Decision{}, err
	}
	d, write, err := st.decide()
	if err != nil || !write {
		return d, err
	}
	return d, txErr(sendTx(ctx, m.rdb, rec, st.write(ctx)))
}

// watch reads under WATCH and writes in MULTI/EXEC; if another client touched the key in
// between, EXEC aborts and the whole decision is made again.
type watch struct{ base }

func (w *watch) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	rec := trace.From(ctx)
	st := w.newStep(key, now, true)
	var d Decision
	for attempt := 0; attempt <= w.cfg.MaxRetries; attempt++ {
		if attempt > 0 {
			rec.Retry()
		}
		// WATCH is sent inside Watch, which calls fn once it is answered.
		watchStep, watchSent := rec.Step("watch", trace.Check), rec.Since()
		err := w.rdb.Watch(ctx, func(tx *redis.Tx) error {
			if watchStep != nil {
				watchStep.Reply.SetText(trace.Bulk, "OK")
				watchStep.SentUs, watchStep.RepliedUs = watchSent, rec.Since()
				watchStep.Phase = trace.Prune // not the count: the how-lines show the read after it
			}
			if err := execErr(sendEach(ctx, tx, rec, st.read(ctx))); err != nil {
				return err
			}
			var write bool
			var err error
			if d, write, err = st.decide(); err != nil || !write {
				return err
			}
			return txErr(sendTx(ctx, tx, rec, st.write(ctx)))
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

// processor sends one command: a client, a WATCH transaction, or a pipeline that queues it.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// txPipeliner runs commands in one MULTI/EXEC: a client, or a WATCH transaction.
type txPipeliner interface {
	TxPipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// sendEach sends cmds one after another, each its own round trip, recording each with its
// reply and times. Every command is sent, as a step's reads are independent.
func sendEach(ctx context.Context, c processor, rec *trace.Recorder, cmds []redis.Cmder) []redis.Cmder {
	for _, cmd := range cmds {
		s := rec.Step(cmd.Name(), phaseOf(cmd.Name()))
		sent := rec.Since()
		_ = c.Process(ctx, cmd) // the error is the command's own: read by execErr
		recordCmd(s, cmd, sent, rec.Since())
	}
	return cmds
}

// sendTx sends cmds in one MULTI/EXEC; each is recorded with its reply and the EXEC's times.
func sendTx(ctx context.Context, c txPipeliner, rec *trace.Recorder, cmds []redis.Cmder) ([]redis.Cmder, error) {
	sent := rec.Since()
	out, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, cmd := range cmds {
			_ = p.Process(ctx, cmd) // queued: answered by EXEC
		}
		return nil
	})
	replied := rec.Since()
	for _, cmd := range cmds {
		recordCmd(rec.Step(cmd.Name(), phaseOf(cmd.Name())), cmd, sent, replied)
	}
	return out, err
}

// phaseOf says what a command of the client-side steps does for the decision.
func phaseOf(op string) trace.Phase {
	switch op {
	case "zremrangebyscore":
		return trace.Prune
	case "zcard", "zcount", "get", "hget":
		return trace.Check
	case "pexpire":
		return trace.Expire
	}
	return trace.Write
}

// recordCmd fills in s (nil: not recorded) with cmd's reply, as Redis sent it.
func recordCmd(s *trace.Step, cmd redis.Cmder, sent, replied int64) {
	if s == nil {
		return
	}
	s.SentUs, s.RepliedUs = sent, replied
	switch err := cmd.Err(); {
	case err == redis.Nil:
		s.Reply.SetNil()
		return
	case err != nil:
		s.Reply.SetText(trace.Error, err.Error())
		return
	}
	switch c := cmd.(type) {
	case *redis.IntCmd:
		s.Reply.SetInt(c.Val())
	case *redis.StringCmd:
		s.Reply.SetText(trace.Bulk, c.Val())
	case *redis.BoolCmd: // PEXPIRE: Redis replies 1 or 0
		var n int64
		if c.Val() {
			n = 1
		}
		s.Reply.SetInt(n)
	}
}

// recordReply fills in s (nil: not recorded) with a script's reply, as Redis sent it.
func recordReply(s *trace.Step, reply any, err error, sent, replied int64) {
	if s == nil {
		return
	}
	s.SentUs, s.RepliedUs = sent, replied
	switch {
	case err == redis.Nil:
		s.Reply.SetNil()
		return
	case err != nil:
		s.Reply.SetText(trace.Error, err.Error())
		return
	}
	switch x := reply.(type) {
	case nil:
		s.Reply.SetNil()
	case int64:
		s.Reply.SetInt(x)
	case string:
		s.Reply.SetText(trace.Bulk, x)
	case []any:
		s.Reply.SetArray(x)
	default:
		s.Reply.SetText(trace.Bulk, "?")
	}
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
	// read and write build the commands, unsent: the strategy sends them its own way.
	read(ctx context.Context) []redis.Cmder
	// decide reads the replies; write says whether the writes must be sent.
	decide() (d Decision, write bool, err error)
	write(ctx context.Context) []redis.Cmder
	watched() string
}

func (b base) newStep(key string, now time.Time, underWatch bool) step {
	return b.kind.step(b, key, now, underWatch)
}
