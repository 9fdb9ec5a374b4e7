package limiter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/trace"
)

// ReplyError is a reply the contract's --script-allowed expression could not judge: the
// script ran, but what it said cannot be read as admitted or rejected.
type ReplyError struct{ Err error }

func (e *ReplyError) Error() string { return e.Err.Error() }
func (e *ReplyError) Unwrap() error { return e.Err }

// IsReplyError reports whether err is a reply the contract could not judge.
func IsReplyError(err error) bool {
	var re *ReplyError
	return errors.As(err, &re)
}

// contracted runs the caller's script with its own calling contract: KEYS and ARGV expanded
// from templates, the reply judged by a Lua expression, the release as a command template.
// Through EVALSHA, falling back to EVAL on NOSCRIPT, as the shipped scripts run.
type contracted struct {
	base
	script *redis.Script
	// answersTime: the virtual clock, script is the wrapper that takes the call's time from two
	// extra ARGV values, and errors name the user's SHA1 (userSHA1), not the wrapper's.
	answersTime bool
	timeMark    bool // the virtual clock keeps each key's mark (TimeKey), appended to KEYS
	userSHA1    string
	release     *redis.Script // the release script (--script-release-file); nil without one
	caller      *contract.Caller
	member      bool
	// replyInRelease: the release passes {reply}, so an admit keeps its reply's text.
	replyInRelease bool
	// shipped: called as the shipped script is, so its reply reads as the shipped one's
	// ({allowed, count, ttl_ms or retry_after_ms}) and the decision carries those numbers.
	shipped bool
}

func newContracted(b base) (*contracted, error) {
	c := b.cfg.Contract
	if c == nil {
		var err error
		if c, err = contract.Compile(contract.Spec{}, b.kind.Contract); err != nil {
			return nil, fmt.Errorf("default contract of %s: %w", b.kind.Kind, err)
		}
	}
	caller, err := c.Bind(contract.Static{
		Limit: b.cfg.Limit, Burst: b.cfg.Burst, Cost: b.cfg.Cost, RatePerS: b.cfg.Rate,
		Window: b.cfg.Window, StaleAfter: b.cfg.StaleAfter,
	})
	if err != nil {
		return nil, err
	}
	d := b.kind.Contract
	shipped := c.Spec.Keys == d.Keys && c.Spec.Args == d.Args && c.Spec.Allowed == contract.DefaultAllowed
	ct := &contracted{base: b, script: redis.NewScript(CustomSource(b.cfg.CustomSource, c.Clock)), caller: caller, member: c.UsesMember(),
		replyInRelease: c.ReleaseUsesReply(), shipped: shipped, answersTime: c.Clock.AnswersTime(),
		timeMark: !b.cfg.NoTimeMark, userSHA1: sha1Hex(b.cfg.CustomSource)}
	if c.Spec.ReleaseScript != "" {
		ct.release = redis.NewScript(c.Spec.ReleaseScript)
	}
	return ct, nil
}

func (c *contracted) Acquire(ctx context.Context, key string, now time.Time) (Decision, error) {
	call, keys, args := c.expand(key, now)
	rec := trace.From(ctx)
	step, sent := rec.Step(Custom.callOp(), trace.Call), rec.Since()
	reply, err := c.script.Run(ctx, c.rdb, keys, args...).Result()
	recordReply(step, reply, err, sent, rec.Since())
	return c.decision(call, reply, err)
}

// expand is the acquire's call at now on key and the script's KEYS and ARGV for it.
func (c *contracted) expand(key string, now time.Time) (contract.Call, []string, []any) {
	call := contract.Call{Key: key, Now: now}
	if c.member {
		call.Member = c.ids.id()
	}
	keys, args := c.caller.Expand(&call)
	if c.answersTime {
		args = appendVirtualTime(args, now, c.timeMark)
		if c.timeMark {
			keys = append(keys[:len(keys):len(keys)], TimeKey(key))
		}
	}
	return call, keys, args
}

// decision judges the script's reply (or error) to call by the contract.
func (c *contracted) decision(call contract.Call, reply any, err error) (Decision, error) {
	if errors.Is(err, redis.Nil) {
		reply, err = nil, nil // Lua false (or nil) is a reply, not a failure
	}
	if err != nil {
		return Decision{}, userSHA1Errors(err, c.script.Hash(), c.userSHA1)
	}
	allowed, err := c.caller.Allowed(reply, &call)
	if err != nil {
		return Decision{}, &ReplyError{Err: err}
	}
	d := Decision{Allowed: allowed, acquiredAt: call.Now}
	if allowed {
		if d.AdmitAt, _, err = c.caller.AdmitAt(reply, &call); err != nil {
			return Decision{}, &ReplyError{Err: err}
		}
		d.Member = call.Member
		if c.replyInRelease {
			d.reply = contract.ReplyText(reply)
		}
	}
	if c.shipped {
		c.readShippedReply(reply, &d)
	}
	return d, nil
}

// readShippedReply fills in what a reply in the shipped scripts' shape says beyond the
// decision; anything else in the reply is left alone (the decision is already made).
func (c *contracted) readShippedReply(reply any, d *Decision) {
	arr, ok := reply.([]any)
	if !ok || len(arr) < 2 {
		return
	}
	if n, ok := arr[1].(int64); ok {
		d.Count = n
	}
	if c.kind.readReply == nil || len(arr) < c.kind.replyLen {
		return
	}
	var vals [maxReplyLen]int64
	for i := 2; i < c.kind.replyLen; i++ {
		n, ok := arr[i].(int64)
		if !ok {
			return
		}
		vals[i] = n
	}
	*d = c.kind.readReply(*d, vals)
}

// Release sends the contract's release command, or calls its release script (concurrency
// only; none releases by expiry).
func (c *contracted) Release(ctx context.Context, key string, d Decision) error {
	r := c.sendRelease(ctx, c.rdb, key, d)
	return c.releaseErr(ctx, r)
}

// releaseCall is a release sent or queued: cmd is nil when there was nothing to release.
type releaseCall struct {
	cmd    *redis.Cmd
	script bool // the release script's EVALSHA, called by EVAL again on NOSCRIPT
	keys   []string
	args   []any
}

// sendRelease sends (or on a pipeline, queues) d's release on rc: a client or a queuer.
func (c *contracted) sendRelease(ctx context.Context, rc queuer, key string, d Decision) releaseCall {
	if !c.kind.Releases || !d.Allowed {
		return releaseCall{}
	}
	call := &contract.Call{Key: key, Member: d.Member, Now: d.acquiredAt, Reply: d.reply}
	if keys, args, ok := c.caller.ReleaseScriptCall(call); ok {
		return releaseCall{cmd: rc.Do(ctx, appendEvalSha(nil, c.release.Hash(), keys, args)...), script: true, keys: keys, args: args}
	}
	cmd := c.caller.ReleaseCommand(call)
	if cmd == nil {
		return releaseCall{}
	}
	return releaseCall{cmd: rc.Do(ctx, cmd...)}
}

// releaseErr is a sent release's outcome.
func (c *contracted) releaseErr(ctx context.Context, r releaseCall) error {
	if r.cmd == nil {
		return nil
	}
	err := r.cmd.Err()
	if r.script && rediserr.IsNoScript(err) {
		err = c.release.Eval(ctx, c.rdb, r.keys, r.args...).Err()
	}
	if r.script && errors.Is(err, redis.Nil) {
		return nil // a release script may answer nothing
	}
	return err
}
