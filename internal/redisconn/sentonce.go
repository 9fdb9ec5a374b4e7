package redisconn

import (
	"context"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A cluster client retries a command after a read timeout or EOF, on the same node and then
// another, up to MaxRedirects times; a single-node client is simply built with MaxRetries -1.
// For a limiter decision that is wrong: the first copy may have run, and a second one counts the
// request twice (or, for a witness, drifts the count). sentOnce marks the commands that change
// a count as not retryable, so the cluster client still follows MOVED and ASK but reports a
// network failure to the caller instead of sending the command again.
type sentOnce struct{}

// countingCommands run scripts or change a count: sent twice, they decide or count twice.
// Plain writes of a member or a field (ZADD, ZREM, HSET) are idempotent and keep go-redis's
// retries. Only single-key commands are listed: a command go-redis fans out over several
// shards aggregates its replies by concrete type, which a wrapper would hide.
var countingCommands = map[string]bool{
	"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true,
	"incr": true, "incrby": true, "incrbyfloat": true, "decr": true, "decrby": true,
	"hincrby": true, "hincrbyfloat": true, "zincrby": true,
}

// notRetried is a command go-redis's cluster client must not send again (Cmder.NoRetry).
type notRetried struct{ redis.Cmder }

func (notRetried) NoRetry() bool { return true }

func (sentOnce) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (sentOnce) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.NoRetry() || !countingCommands[strings.ToLower(cmd.Name())] {
			return next(ctx, cmd)
		}
		return next(ctx, notRetried{cmd})
	}
}

// ProcessPipelineHook marks every command of a pipeline or MULTI/EXEC block: go-redis retries
// a pipeline as a whole, so one non-retryable command keeps the whole batch from being resent.
func (sentOnce) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		marked := make([]redis.Cmder, len(cmds))
		for i, cmd := range cmds {
			marked[i] = notRetried{cmd}
		}
		return next(ctx, marked)
	}
}
