package limiter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/trace"
)

// scripted runs the limiter's shipped Lua script (lua, eval, function, lua-ts-member). The
// whole decision happens inside Redis, atomically. The caller's script runs as contracted.
type scripted struct {
	base
	strategy Strategy
	script   *redis.Script
	fn       string // function strategy: the FCALL name
	// call is the command and its first argument (EVALSHA and the SHA1, EVAL and the source,
	// FCALL and the function), boxed once: a Batch writes them into every call's arguments.
	call [2]any
	// callText is call as text, its command upper-cased (as rueidis keeps a command's name),
	// for a queue that takes a script's call whole (scriptQueuer).
	callText [2]string
}

func newScripted(b base, s Strategy) *scripted {
	shipped := ScriptFor(b.kind.Kind)
	sc := &scripted{base: b, strategy: s, script: redis.NewScript(shipped.Source)}
	sc.call = [2]any{"evalsha", sc.script.Hash()}
	switch s {
	case Function:
		sc.fn = shipped.FunctionName()
		sc.call = [2]any{"fcall", sc.fn}
	case Eval:
		sc.call = [2]any{"eval", shipped.Source}
	}
	sc.callText = [2]string{strings.ToUpper(sc.call[0].(string)), sc.call[1].(string)}
	return sc
}

func (s *scripted) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	var member string
	if s.kind.member {
		member = s.member(now.UnixMilli())
	}
	keys, args := s.kind.args(s.cfg, nil, nil, key, now, member)
	rec := trace.From(ctx)
	step, sent := rec.Step(s.strategy.callOp(), trace.Call), rec.Since()
	loads := scriptcache.LibraryLoads()
	reply, err := s.send(ctx, s.rdb, keys, args).Result()
	reply, err = s.recover(ctx, keys, args, reply, err, loads)
	recordReply(step, reply, err, sent, rec.Since())
	return s.decision(reply, err, member)
}

// decision reads the script's reply (or error) as the decision of a call that added member.
func (s *scripted) decision(reply any, err error, member string) (Decision, error) {
	if err != nil {
		return Decision{}, err
	}
	d, err := s.kind.scriptReply(reply)
	if err != nil {
		return Decision{}, err
	}
	if d.Allowed {
		d.Member = member
	}
	return d, nil
}

// intsDecision reads the script's reply, an array of integers recorded once (scriptReply),
// as the decision of a call that added member.
func (s *scripted) intsDecision(reply *trace.Reply, member string) (Decision, error) {
	d, err := s.kind.scriptInts(reply)
	if err != nil {
		return Decision{}, err
	}
	if d.Allowed {
		d.Member = member
	}
	return d, nil
}

// callOp is the command a script strategy's decision sends (EVALSHA falls back to EVAL only
// after a NOSCRIPT, and its reply is the same script's).
func (s Strategy) callOp() string {
	switch s {
	case Eval:
		return "eval"
	case Function:
		return "fcall"
	}
	return "evalsha"
}

func (s *scripted) member(nowMs int64) string {
	if s.strategy == LuaTSMember {
		return strconv.FormatInt(nowMs, 10)
	}
	return s.ids.id()
}

// send sends (or on a pipeline, queues) the script's call: EVAL, FCALL, or EVALSHA.
func (s *scripted) send(ctx context.Context, c redis.Cmdable, keys []string, args []any) *redis.Cmd {
	switch s.strategy {
	case Eval:
		return s.script.Eval(ctx, c, keys, args...)
	case Function:
		return c.FCall(ctx, s.fn, keys, args...)
	default:
		return s.script.EvalSha(ctx, c, keys, args...)
	}
}

// recover calls again, once, a call that failed for want of its script: on NOSCRIPT (cache
// flushed, restart, failover) EVALSHA ran nothing, and EVAL runs it, caching it again; an FCALL
// of a missing library loads it first. loads is scriptcache.LibraryLoads from before the call
// was sent. Any other outcome is returned as it is.
func (s *scripted) recover(ctx context.Context, keys []string, args []any, reply any, err error, loads uint64) (any, error) {
	switch s.strategy {
	case Eval:
	case Function:
		if rediserr.ClassifyScriptCall(err) == rediserr.Script {
			// A bare ERR is how Redis answers an FCALL of a function it lacks (FUNCTION FLUSH, a
			// fresh server), and how a function that failed part way reports (its writes so far
			// stay, so calling it again is another decision). Call again only when the library is
			// missing (loading it first), or another call of this process loaded it since this
			// one was sent, which then found it missing too.
			missing, lerr := scriptcache.LibraryMissing(ctx, s.rdb)
			if lerr == nil && (missing || scriptcache.LibraryLoadsSettled() != loads) {
				if missing {
					if err := scriptcache.InstallLibrary(ctx, s.rdb); err != nil {
						return nil, err
					}
				}
				return s.rdb.FCall(ctx, s.fn, keys, args...).Result()
			}
		}
	default:
		if err != nil && rediserr.IsNoScript(err) { // (its errors.As allocates)
			return s.script.Eval(ctx, s.rdb, keys, args...).Result()
		}
	}
	return reply, err
}

// maxReplyLen bounds the integers a shipped script's reply is read for (int64s's n).
const maxReplyLen = 4

// int64s decodes a script reply that must be an array of at least n (at most maxReplyLen)
// integers into vals, which it returns: the caller's array, so a decision allocates none.
func int64s(vals *[maxReplyLen]int64, reply any, n int) ([]int64, error) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("want an array of %d integers, got %s", n, describe(reply))
	}
	if len(arr) < n {
		return nil, shortReply(n, len(arr))
	}
	out := vals[:n]
	for i := 0; i < n; i++ {
		v, ok := arr[i].(int64)
		if !ok {
			return nil, fmt.Errorf("element %d: want an integer, got %s", i+1, describe(arr[i]))
		}
		out[i] = v
	}
	return out, nil
}

// shortReply is the error of a reply of fewer integers than the n the decision reads.
func shortReply(n, got int) error {
	return fmt.Errorf("want an array of %d integers, got %d elements", n, got)
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
