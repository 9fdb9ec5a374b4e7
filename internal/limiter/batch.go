package limiter

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/trace"
)

// Call is one acquire in a Batch (or, with Release, the release of an admitted acquire's
// Decision): Key and Now in, Decision and Err out, as Acquire and Release take and give them.
type Call struct {
	Key     string
	Now     time.Time
	Release bool
	// Decision is the acquire's outcome, or for a release the decision it releases.
	Decision Decision
	Err      error
	// Trace is the recorder of the worker whose acquire this is (nil records nothing), its
	// decision begun (Recorder.Begin): the acquire's command and reply are its step, as
	// Acquire records them through its context.
	Trace *trace.Recorder

	// what the call sent, kept for reading its reply and for calling it again on NOSCRIPT
	cmd      *redis.Cmd
	keys     []string
	args     []any
	member   string
	contract contract.Call
	release  releaseCall
	step     *trace.Step
}

// Batch sends many calls as one pipeline, on one connection of the limiter's client (of each
// master its keys live on, on a cluster, where go-redis follows MOVED and ASK): one round trip
// per batch instead of one per call, and no goroutine per call. The calls are as independent as
// calls from separate clients: each is a command of its own, and other clients' commands may
// run between them. Each gets its own reply or error, so an EVALSHA the server lacks the script
// for is called again alone, as Acquire would (NOSCRIPT recovery), and nothing else is retried.
// A Batch is not safe for concurrent use; reuse it round after round.
type Batch struct {
	lim batched
	rdb Client
	// args are each call's command arguments, reused round after round: a decision allocates
	// no argument list of its own (go-redis keeps a Do's arguments as given, until its reply).
	args [][]any
}

// batched is a limiter whose calls can be queued on a pipeline and read back.
type batched interface {
	Limiter
	client() Client
	// queue adds c's command to p (setting c.cmd, or c.release for a release), its arguments
	// written into *args, which it may grow.
	queue(ctx context.Context, p redis.Pipeliner, c *Call, args *[]any)
	// settle reads c's reply once the pipeline ran; loads is scriptcache.LibraryLoads from
	// before it was sent.
	settle(ctx context.Context, c *Call, loads uint64)
}

// NewBatch returns a batch for lim, or nil when lim's decisions take more than one command
// (the client-side strategies: their reads, decision and writes are round trips of their own).
func NewBatch(lim Limiter) *Batch {
	b, ok := lim.(batched)
	if !ok {
		return nil
	}
	return &Batch{lim: b, rdb: b.client()}
}

// Do runs every call of calls in one pipeline and fills in their outcomes. A transport error
// (a connection that failed, a timeout) is the error of every call it left unanswered.
func (b *Batch) Do(ctx context.Context, calls []Call) {
	p := b.rdb.Pipeline()
	loads := scriptcache.LibraryLoads()
	for len(b.args) < len(calls) {
		b.args = append(b.args, nil)
	}
	for i := range calls {
		c := &calls[i]
		c.Err, c.cmd, c.release, c.step = nil, nil, releaseCall{}, nil
		b.lim.queue(ctx, p, c, &b.args[i])
	}
	sent := time.Now()
	if p.Len() > 0 {
		p.Exec(ctx) //nolint:errcheck // every command carries its own reply or error
	}
	for i := range calls {
		b.lim.settle(ctx, &calls[i], loads)
	}
	// go-redis reads a pipeline's replies together (Exec returns once all are in), so a call's
	// step is stamped with its round's times: from before the pipeline was written to after the
	// last reply was read (and any call made again on NOSCRIPT was answered). That holds the
	// call's own interval, only wider, which is sound: the step still bounds when the server ran
	// the call, as the evidence's [sent, replied] of a round does (bench's rounds.go).
	replied := time.Now()
	for i := range calls {
		if c := &calls[i]; c.step != nil {
			c.step.SentUs, c.step.RepliedUs = c.Trace.At(sent), c.Trace.At(replied)
		}
	}
}

func (s *scripted) client() Client { return s.rdb }

func (s *scripted) queue(ctx context.Context, p redis.Pipeliner, c *Call, args *[]any) {
	if c.Release {
		if s.kind.Releases && c.Decision.Allowed && c.Decision.Member != "" {
			c.release = releaseCall{cmd: p.Do(ctx, "zrem", c.Key, c.Decision.Member)}
		}
		return
	}
	c.member = ""
	if s.kind.member {
		c.member = s.member(c.Now.UnixMilli())
	}
	c.keys, c.args = s.kind.args(s.cfg, c.Key, c.Now, c.member)
	c.step = c.Trace.Step(s.strategy.callOp(), trace.Call)
	// As s.send would send it (EVALSHA sha numkeys keys... args...), into the reused list.
	a := append((*args)[:0], s.call[0], s.call[1], len(c.keys))
	for _, k := range c.keys {
		a = append(a, k)
	}
	*args = append(a, c.args...)
	c.cmd = p.Do(ctx, *args...)
	if len(c.keys) > 0 {
		c.cmd.SetFirstKeyPos(3) // a cluster routes the call by its first key, as EvalSha's
	}
}

func (s *scripted) settle(ctx context.Context, c *Call, loads uint64) {
	if c.Release {
		if c.release.cmd != nil {
			c.Err = c.release.cmd.Err()
		}
		return
	}
	reply, err := c.cmd.Result()
	reply, err = s.recover(ctx, c.keys, c.args, reply, err, loads)
	recordReply(c.step, reply, err, 0, 0) // its times are its round's (Do)
	c.Decision, c.Err = s.decision(reply, err, c.member)
}

func (c *contracted) client() Client { return c.rdb }

func (c *contracted) queue(ctx context.Context, p redis.Pipeliner, call *Call, _ *[]any) {
	if call.Release {
		call.release = c.sendRelease(ctx, p, call.Key, call.Decision)
		return
	}
	call.contract, call.keys, call.args = c.expand(call.Key, call.Now)
	call.step = call.Trace.Step(Custom.callOp(), trace.Call)
	call.cmd = p.EvalSha(ctx, c.script.Hash(), call.keys, call.args...)
}

func (c *contracted) settle(ctx context.Context, call *Call, _ uint64) {
	if call.Release {
		call.Err = c.releaseErr(ctx, call.release)
		return
	}
	reply, err := call.cmd.Result()
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		reply, err = c.script.Eval(ctx, c.rdb, call.keys, call.args...).Result()
	}
	recordReply(call.step, reply, err, 0, 0) // its times are its round's (Do)
	call.Decision, call.Err = c.decision(call.contract, reply, err)
}
