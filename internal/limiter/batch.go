package limiter

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/rediserr"
	"github.com/limitctl/limitctl/internal/scriptcache"
	"github.com/limitctl/limitctl/internal/trace"
	"github.com/limitctl/limitctl/internal/wire"
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

	// what the call sent, kept for reading its reply and for calling it again on NOSCRIPT: its
	// reply is cmd's, or reply's when a scriptQueuer took the call
	cmd      *redis.Cmd
	reply    scriptReply
	keys     []string
	args     []any
	member   string
	contract contract.Call
	release  releaseCall
	step     *trace.Step
}

// Batch sends many calls as one pipeline, on one connection of the limiter's client (of each
// master its keys live on, on a cluster, where go-redis follows MOVED and ASK), or with
// Config.Direct on a connection of the batch's own (package wire), or with Config.Shared as one
// DoMulti of the strategy's rueidis client (a cluster's, which routes each call to its key's
// master and follows MOVED and ASK), or with Config.Nodes as well on a connection of the
// batch's own to each call's master, rueidis taking only what those cannot (batch_nodes.go):
// one round trip per batch instead of one per call,
// and no goroutine per call. The calls are as independent as calls from separate clients: each
// is a command of its own, and other clients' commands may run between them. Each gets its own
// reply or error, so an EVALSHA the server lacks the script for is called again alone, as
// Acquire would (NOSCRIPT recovery), and nothing else is retried.
// A Batch is not safe for concurrent use; reuse it round after round, and Close it after.
type Batch struct {
	lim batched
	rdb Client
	// scratch is each call's argument lists, reused round after round: a decision allocates
	// no argument list of its own (go-redis keeps a Do's arguments as given, until its reply).
	scratch []scratch
	// direct: the batch's own connection, dialled when first needed and again after it broke.
	direct *redis.Options
	conn   *wire.Conn
	wq     wireQueue
	// shared: the strategy's rueidis client (Config.Shared), when there is no direct.
	shared SharedClient
	sq     sharedQueue
	// nq: a cluster's masters on connections of the batch's own (Config.Nodes), the shared
	// client taking what they cannot (batch_nodes.go); its topo is nil without Nodes.
	nq nodeQueue
}

// batched is a limiter whose calls can be queued on a pipeline and read back.
type batched interface {
	Limiter
	client() Client
	directOptions() *redis.Options
	sharedClient() (SharedClient, time.Duration)
	// nodes is the cluster's slot map and the options its masters' connections are dialled
	// with (Config.Nodes), or nil.
	nodes() (*topology, *redis.Options)
	// queue adds c's command to p (setting c.cmd, or c.release for a release), its lists
	// written into sc's, which it may grow.
	queue(ctx context.Context, p queuer, c *Call, sc *scratch)
	// settle reads c's reply once the pipeline ran; loads is scriptcache.LibraryLoads from
	// before it was sent.
	settle(ctx context.Context, c *Call, loads uint64)
	// route is the first key of the acquire on key at now, which routes it on a cluster (Groups).
	route(key string, now time.Time) string
}

// scratch is the lists of one call of a batch, kept for the next round's call in its place:
// the command's arguments, and the script's KEYS and ARGV (kept until the reply is read, for
// calling it again on NOSCRIPT).
type scratch struct {
	cmd  []any
	keys []string
	argv []any
}

// queuer takes a command for the next round trip: a go-redis pipeline, or a wireQueue.
type queuer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// scriptQueuer is a queuer that takes a script's call whole: call is the command and its first
// argument (EVALSHA and the SHA1, EVAL and the source, FCALL and the function), then the keys and
// the args, as EVALSHA sha numkeys keys... args... sends them; its reply is read into out.
type scriptQueuer interface {
	Script(ctx context.Context, call [2]string, keys []string, args []any, out *scriptReply)
}

// scriptReply is a script call's reply as a scriptQueuer read it, decoded once: an array of
// integers (every shipped script's reply) straight into the trace's own record, which the
// decision reads too; any other reply, or any reply at all when full (a contract's expression
// reads the whole of it), as go-redis's Cmd.Result gives it.
type scriptReply struct {
	full bool        // asked for before the call is queued: val holds the reply, whatever it is
	ints bool        // rec holds the reply, an array of integers (the first trace.MaxInts kept)
	rec  trace.Reply // the reply when ints
	val  any
	err  error
}

func (r *scriptReply) set(v any, err error) { r.ints, r.val, r.err = false, v, err }

func (r *scriptReply) setInts(n int, first []int64) {
	r.ints, r.val, r.err = true, nil, nil
	r.rec.SetInts(n, first)
}

// result is the call's reply as go-redis gives it (cmd's, when the call went through one).
func (c *Call) result() (any, error) {
	if c.cmd != nil {
		return c.cmd.Result()
	}
	return c.reply.val, c.reply.err
}

// NewBatch returns a batch for lim, or nil when lim's decisions take more than one command
// (the client-side strategies: their reads, decision and writes are round trips of their own).
func NewBatch(lim Limiter) *Batch {
	b, ok := lim.(batched)
	if !ok {
		return nil
	}
	batch := &Batch{lim: b, rdb: b.client(), direct: b.directOptions()}
	if batch.direct == nil {
		batch.shared, batch.sq.timeout = b.sharedClient()
	}
	if topo, opts := b.nodes(); topo != nil && batch.shared != nil && isCluster(batch.shared) {
		batch.nq = nodeQueue{topo: topo, opts: opts, sq: &batch.sq}
	}
	return batch
}

// Direct reports whether the batch's calls bypass go-redis: on a connection of its own
// (Config.Direct) or through the strategy's rueidis client (Config.Shared), either of which
// takes one round per call from many workers at once as cheaply as one round of many calls.
func (b *Batch) Direct() bool { return b != nil && (b.direct != nil || b.shared != nil) }

// OneCallARound tells the batch that its rounds carry one call each (a worker's own, without
// --conns): on a cluster they then go through the shared rueidis client, which pipelines many
// batches' rounds on one connection per master, rather than on connections of the batch's own
// to every master (Config.Nodes), which pay for themselves only with many calls a round and
// would open workers × masters connections.
func (b *Batch) OneCallARound() {
	if b != nil {
		b.nq.close()
		b.nq.topo = nil
	}
}

// Close closes the batch's own connection, if it has one.
func (b *Batch) Close() {
	if b == nil {
		return
	}
	if b.conn != nil {
		b.conn.Close()
		b.conn = nil
	}
	b.nq.close()
}

// Do runs every call of calls in one pipeline and fills in their outcomes. A transport error
// (a connection that failed, a timeout) is the error of every call it left unanswered.
func (b *Batch) Do(ctx context.Context, calls []Call) {
	loads := scriptcache.LibraryLoads()
	for len(b.scratch) < len(calls) {
		b.scratch = append(b.scratch, scratch{})
	}
	var p redis.Pipeliner
	var q queuer
	switch {
	case b.direct != nil:
		b.wq.reset(b.connect(ctx))
		q = &b.wq
	case b.nq.topo != nil:
		b.nq.reset(ctx, b.shared, b.sq.timeout)
		q = &b.nq
	case b.shared != nil:
		b.sq.reset(b.shared, b.sq.timeout)
		q = &b.sq
	default:
		p = b.rdb.Pipeline()
		q = p
	}
	for i := range calls {
		c := &calls[i]
		c.Err, c.cmd, c.release, c.step = nil, nil, releaseCall{}, nil
		c.reply.full = false
		b.lim.queue(ctx, q, c, &b.scratch[i])
	}
	sent := time.Now()
	switch {
	case p != nil && p.Len() > 0:
		p.Exec(ctx) //nolint:errcheck // every command carries its own reply or error
	case b.direct != nil:
		b.wq.exec(ctx)
	case b.nq.topo != nil:
		b.nq.exec(ctx)
	case b.shared != nil:
		b.sq.exec(ctx)
	}
	for i := range calls {
		b.lim.settle(ctx, &calls[i], loads)
	}
	// go-redis reads a pipeline's replies together (Exec returns once all are in), as wire's
	// round does, so a call's step is stamped with its round's times: from before the pipeline
	// was written to after the last reply was read (and any call made again on NOSCRIPT was
	// answered). That holds the call's own interval, only wider, which is sound: the step still
	// bounds when the server ran the call, as the evidence's [sent, replied] of a round does
	// (bench's rounds.go).
	replied := time.Now()
	for i := range calls {
		if c := &calls[i]; c.step != nil {
			c.step.SentUs, c.step.RepliedUs = c.Trace.At(sent), c.Trace.At(replied)
		}
	}
}

// connect returns the batch's connection, dialling it if it has none or it broke (the calls
// it left unanswered were told), or the dial's error.
func (b *Batch) connect(ctx context.Context) (*wire.Conn, error) {
	if b.conn != nil && b.conn.Err() == nil {
		return b.conn, nil
	}
	b.Close()
	c, err := wire.Dial(ctx, b.direct)
	if err != nil {
		return nil, err
	}
	b.conn = c
	return c, nil
}

// wireQueue is a round on a wire connection: each command queued is appended to the
// connection's buffer, and its reply (or the round's error) is set on a *redis.Cmd of its own,
// reused round after round, so that settle reads it as it reads go-redis's; a script's call
// (Script) is read into its scriptReply instead.
type wireQueue struct {
	conn *wire.Conn
	err  error // the connection could not be had: every command's error
	cmds []*redis.Cmd
	outs []*scriptReply // each command's scriptReply (Script), or nil (Do)
	n    int            // commands queued this round
	sent []bool
}

func (q *wireQueue) reset(conn *wire.Conn, err error) { q.conn, q.err, q.n = conn, err, 0 }

// slot is the round's next command: its place, and whether it can be sent.
func (q *wireQueue) slot(out *scriptReply) (i int, ok bool) {
	if q.n == len(q.sent) {
		q.cmds, q.outs, q.sent = append(q.cmds, nil), append(q.outs, nil), append(q.sent, false)
	}
	i = q.n
	q.n++
	q.outs[i], q.sent[i] = out, false
	return i, q.err == nil
}

func (q *wireQueue) Do(ctx context.Context, args ...any) *redis.Cmd {
	i, ok := q.slot(nil)
	if q.cmds[i] == nil {
		q.cmds[i] = redis.NewCmd(ctx)
	}
	cmd := q.cmds[i]
	cmd.SetVal(nil)
	cmd.SetErr(q.err)
	if ok {
		if err := q.conn.Append(args...); err != nil {
			cmd.SetErr(err)
		} else {
			q.sent[i] = true
		}
	}
	return cmd
}

// Script queues a script's call without boxing its keys (wire.Conn.AppendScript), its reply
// read as an array of integers when it is one (wire.Conn.ReadInts).
func (q *wireQueue) Script(_ context.Context, call [2]string, keys []string, args []any, out *scriptReply) {
	i, ok := q.slot(out)
	out.set(nil, q.err)
	if ok {
		if err := q.conn.AppendScript(call[0], call[1], keys, args); err != nil {
			out.set(nil, err)
		} else {
			q.sent[i] = true
		}
	}
}

// exec writes the round's commands and reads their replies in order; a failure of the
// connection is the error of every command it left unanswered.
func (q *wireQueue) exec(ctx context.Context) {
	q.receive(q.send(ctx))
}

// send writes the round's commands (nil when there were none to write): the first half of exec.
func (q *wireQueue) send(ctx context.Context) error {
	if q.err != nil || q.n == 0 {
		return nil
	}
	return q.conn.Flush(ctx)
}

// receive reads the replies of the commands send wrote, or sets err (send's) on each: the second
// half of exec.
func (q *wireQueue) receive(err error) {
	if q.err != nil || q.n == 0 {
		return
	}
	var first [trace.MaxInts]int64
	for i := range q.n {
		if !q.sent[i] {
			continue
		}
		out, cmd := q.outs[i], q.cmds[i]
		if err != nil {
			if out != nil {
				out.set(nil, err)
			} else {
				cmd.SetErr(err)
			}
			continue
		}
		var rerr error
		switch {
		case out == nil:
			var v any
			v, rerr = q.conn.Read()
			cmd.SetVal(v)
			cmd.SetErr(rerr)
		case out.full:
			var v any
			v, rerr = q.conn.Read()
			out.set(v, rerr)
		default:
			n, ints, v, e := q.conn.ReadInts(first[:])
			if rerr = e; ints {
				out.setInts(n, first[:])
			} else {
				out.set(v, rerr)
			}
		}
		if rerr != nil && q.conn.Err() != nil {
			err = rerr
		}
	}
}

func (b base) directOptions() *redis.Options { return b.cfg.Direct }

func (b base) sharedClient() (SharedClient, time.Duration) {
	return b.cfg.Shared, b.cfg.SharedTimeout
}

func (b base) nodes() (*topology, *redis.Options) { return b.slots, b.cfg.Nodes }

func (s *scripted) client() Client { return s.rdb }

func (s *scripted) queue(ctx context.Context, p queuer, c *Call, sc *scratch) {
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
	sc.keys, sc.argv = s.kind.args(s.cfg, sc.keys, sc.argv, c.Key, c.Now, c.member)
	c.keys, c.args = sc.keys, sc.argv
	c.step = c.Trace.Step(s.strategy.callOp(), trace.Call)
	if sq, ok := p.(scriptQueuer); ok {
		sq.Script(ctx, s.callText, c.keys, c.args, &c.reply)
		return
	}
	// As s.send would send it (EVALSHA sha numkeys keys... args...), into the reused list.
	a := append(sc.cmd[:0], s.call[0], s.call[1], len(c.keys))
	for _, k := range c.keys {
		a = append(a, k)
	}
	sc.cmd = append(a, c.args...)
	c.cmd = p.Do(ctx, sc.cmd...)
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
	if c.cmd == nil && c.reply.ints {
		// An array of integers, decoded once: the step keeps the record the decision reads.
		if c.step != nil {
			c.step.Reply = c.reply.rec // its times are its round's (Do)
		}
		c.Decision, c.Err = s.intsDecision(&c.reply.rec, c.member)
		return
	}
	reply, err := c.result()
	reply, err = s.recover(ctx, c.keys, c.args, reply, err, loads)
	recordReply(c.step, reply, err, 0, 0) // its times are its round's (Do)
	c.Decision, c.Err = s.decision(reply, err, c.member)
}

func (c *contracted) client() Client { return c.rdb }

func (c *contracted) queue(ctx context.Context, p queuer, call *Call, sc *scratch) {
	if call.Release {
		call.release = c.sendRelease(ctx, p, call.Key, call.Decision)
		return
	}
	call.contract, call.keys, call.args = c.expand(call.Key, call.Now)
	call.step = call.Trace.Step(Custom.callOp(), trace.Call)
	if sq, ok := p.(scriptQueuer); ok {
		call.reply.full = true // the contract reads the whole reply
		sq.Script(ctx, [2]string{"EVALSHA", c.script.Hash()}, call.keys, call.args, &call.reply)
		return
	}
	sc.cmd = appendEvalSha(sc.cmd[:0], c.script.Hash(), call.keys, call.args)
	call.cmd = p.Do(ctx, sc.cmd...)
}

// appendEvalSha appends EVALSHA sha numkeys keys... args... to a (go-redis routes it on a
// cluster by its first key, as its own EvalSha).
func appendEvalSha(a []any, sha string, keys []string, args []any) []any {
	a = append(a, "evalsha", sha, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	return append(a, args...)
}

func (c *contracted) settle(ctx context.Context, call *Call, _ uint64) {
	if call.Release {
		call.Err = c.releaseErr(ctx, call.release)
		return
	}
	reply, err := call.result()
	if rediserr.IsNoScript(err) {
		reply, err = c.script.Eval(ctx, c.rdb, call.keys, call.args...).Result()
	}
	recordReply(call.step, reply, err, 0, 0) // its times are its round's (Do)
	call.Decision, call.Err = c.decision(call.contract, reply, err)
}
