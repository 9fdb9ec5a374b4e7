package redistrace

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// MONITOR shows no replies, but a run's keys are fresh (its identities hold no state from before
// it) and every command on them is in the trace, in the order Redis ran it, with the time it
// ran; so running them again in that order, on an in-process Redis (miniredis) whose clock is
// moved on as Redis's was between them (a TTL ends as it ended there), gives each its reply: a
// GET the count it read, an INCR the count it made. A script's own commands are run again, not
// its call (whose reply is the script's, and unknown); a WATCH, nothing. Replies read this way
// are marked FromReplay. A trace that dropped commands is not replayed: the state would be wrong.

// replayStep is the least time the replay's clock is moved on at once: TTLs are set in
// milliseconds, and moving less often lets the commands between go in one round trip.
const replayStep = time.Millisecond

// replay fills in the replies of cmds (every command on their keys, in the order Redis ran them)
// that are not known.
func replay(ctx context.Context, cmds []*Command) error {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return err
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	var batch []*Command
	var pending []*redis.Cmd
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		pipe := rdb.Pipeline()
		pending = pending[:0]
		for _, c := range batch {
			args := make([]any, 0, 1+len(c.Args))
			args = append(args, c.Name)
			for _, a := range c.Args {
				args = append(args, a)
			}
			pending = append(pending, pipe.Do(ctx, args...))
		}
		if _, err := pipe.Exec(ctx); err != nil && !isReplyErr(err) {
			return err
		}
		for i, c := range batch {
			if v, known := replyValue(pending[i].Result()); known {
				c.Reply = Reply{From: FromReplay, Value: v}
			}
		}
		batch = batch[:0]
		return nil
	}
	var clock int64
	started := false
	for _, c := range cmds {
		if c.Reply.From != "" || c.In == "" && RoleOf(c.Name) == RoleScript || RoleOf(c.Name) == RoleTx {
			continue // known, or not run again (a script's call, a WATCH)
		}
		if !started {
			clock, started = c.AtUs, true
		}
		if d := time.Duration(c.AtUs-clock) * time.Microsecond; d >= replayStep {
			if err := flush(); err != nil {
				return err
			}
			m.FastForward(d)
			clock = c.AtUs
		}
		batch = append(batch, c)
	}
	return flush()
}

// isReplyErr reports whether err is an error reply (a command the replay could not run, whose
// reply then reads as that error) rather than the connection's.
func isReplyErr(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// replyValue is a go-redis result as a Reply's Value; known is false for a command the
// replay's server does not know (Redis ran it: its reply is not an error).
func replyValue(v any, err error) (value any, known bool) {
	switch {
	case errors.Is(err, redis.Nil):
		return nil, true
	case err != nil && strings.HasPrefix(err.Error(), "ERR unknown command"):
		return nil, false
	case err != nil:
		return ReplyError(err.Error()), true
	}
	if arr, ok := v.([]any); ok {
		out := make([]any, len(arr))
		for i, e := range arr {
			if er, isErr := e.(error); isErr {
				out[i] = ReplyError(er.Error())
				continue
			}
			out[i], _ = replyValue(e, nil)
		}
		return out, true
	}
	return v, true
}
