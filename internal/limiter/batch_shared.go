package limiter

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/trace"
	"github.com/limitctl/limitctl/internal/wire"
)

// sharedQueue is a round on a rueidis client (Config.Shared): each command queued is built as
// rueidis's, its keys named so that the client routes it to their master, and the round is
// one DoMulti; each reply (or its error) is set on a *redis.Cmd of its own, reused round after
// round, so that settle reads it as it reads go-redis's, or a script's call's (Script) read into
// its scriptReply.
type sharedQueue struct {
	client  SharedClient
	timeout time.Duration // each round's bound: the go-redis client's read timeout
	cmds    []*redis.Cmd
	built   rueidis.Commands
	sent    []int          // the index in cmds of each command built (Do)
	outs    []*scriptReply // each command built's scriptReply (Script), or nil (Do)
	n       int
	strs    []string
	// numbers are the integers last written at each argument position, with their text: a
	// limit, a window or a millisecond repeat call after call, and are formatted once.
	numbers []formatted
	arrays  []reusedArray // each command slot's array reply, reused (reusedArray)
}

// formatted is an integer argument and its text.
type formatted struct {
	n    int64
	text string
}

func (q *sharedQueue) reset(client SharedClient, timeout time.Duration) {
	q.client, q.timeout, q.n, q.built, q.sent, q.outs = client, timeout, 0, q.built[:0], q.sent[:0], q.outs[:0]
}

// next is the round's next command, cleared, with args written as text into q.strs (from is
// the position of the first in the numbers' cache); ok is false, the command failed, when an
// argument is of a type go-redis's writer refuses.
func (q *sharedQueue) next(ctx context.Context, args []any, from int) (cmd *redis.Cmd, ok bool) {
	if q.n == len(q.cmds) {
		q.cmds = append(q.cmds, redis.NewCmd(ctx))
	}
	cmd = q.cmds[q.n]
	q.n++
	cmd.SetVal(nil)
	cmd.SetErr(nil)
	if !q.texts(args, from) {
		cmd.SetErr(wire.ErrUnsupportedArg)
		return cmd, false
	}
	return cmd, true
}

// texts writes args as text into q.strs (from is the position of the first in the numbers'
// cache); false when an argument is of a type go-redis's writer refuses.
func (q *sharedQueue) texts(args []any, from int) bool {
	q.strs = q.strs[:0]
	for i, a := range args {
		s, ok := q.arg(from+i, a)
		if !ok {
			return false
		}
		q.strs = append(q.strs, s)
	}
	return true
}

func (q *sharedQueue) Do(ctx context.Context, args ...any) *redis.Cmd {
	cmd, ok := q.next(ctx, args, 0)
	if !ok {
		return cmd
	}
	// The tokens before the first key, the first key, which routes the command (as go-redis
	// routes it; keys of other slots are the server's to refuse with CROSSSLOT, where rueidis
	// would panic), then the rest. A script called with no keys goes to any master.
	tokens, keys := q.strs[:1], q.strs[1:min(2, len(q.strs))]
	switch strings.ToLower(q.strs[0]) {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro":
		tokens, keys = q.strs[:min(3, len(q.strs))], nil
		if n, err := strconv.Atoi(q.strs[min(2, len(q.strs)-1)]); err == nil && n > 0 && len(q.strs) > 3 {
			keys = q.strs[3:4]
		}
	}
	rest := q.strs[len(tokens)+len(keys):]
	q.built = append(q.built, q.client.B().Arbitrary(tokens...).Keys(keys...).Args(rest...).Build())
	q.sent, q.outs = append(q.sent, q.n-1), append(q.outs, nil)
	return cmd
}

// Script queues a script's call (EVALSHA sha, EVAL source or FCALL name; then the keys and
// args) as Do would queue its go-redis arguments, without boxing each key into an any and
// parsing the command back out of them: the shape the load's hot path sends on every decision.
// Its reply is read into out: an array of integers without building it as go-redis's.
func (q *sharedQueue) Script(_ context.Context, call [2]string, keys []string, args []any, out *scriptReply) {
	// Argument positions apart from Do's, whose args start at the command.
	if !q.texts(args, len(keys)) {
		out.set(nil, wire.ErrUnsupportedArg)
		return
	}
	out.set(nil, nil)
	// The first key routes the call (as Do routes it); a call with no keys goes to any master.
	numkeys, _ := q.arg(len(keys)+len(args), len(keys))
	q.built = append(q.built,
		q.client.B().Arbitrary(call[0], call[1], numkeys).Keys(keys[:min(1, len(keys))]...).Args(keys[min(1, len(keys)):]...).Args(q.strs...).Build())
	q.sent, q.outs = append(q.sent, -1), append(q.outs, out)
}

// exec sends the round's commands in one DoMulti, bounded by the timeout, and sets each reply.
func (q *sharedQueue) exec(ctx context.Context) {
	if len(q.built) == 0 {
		return
	}
	if q.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.timeout)
		defer cancel()
	}
	for len(q.arrays) < len(q.built) {
		q.arrays = append(q.arrays, reusedArray{})
	}
	for i, res := range q.client.DoMulti(ctx, q.built...) {
		out := q.outs[i]
		m, err := res.ToMessage()
		if err != nil {
			err = goRedisError(err)
		}
		switch {
		case out == nil:
			cmd := q.cmds[q.sent[i]]
			if err != nil {
				cmd.SetErr(err)
				continue
			}
			v, err := q.arrays[i].reply(&m)
			cmd.SetVal(v)
			cmd.SetErr(err)
		case err != nil:
			out.set(nil, err)
		case !out.full && setInts(out, &m):
		default:
			out.set(q.arrays[i].reply(&m))
		}
	}
}

// setInts reads m into out when it is an array of integers (scriptReply), and says whether it was.
func setInts(out *scriptReply, m *rueidis.RedisMessage) bool {
	if !m.IsArray() {
		return false
	}
	elems, _ := m.ToArray()
	var first [trace.MaxInts]int64
	for i := range elems {
		if !elems[i].IsInt64() {
			return false
		}
		if i < len(first) {
			first[i], _ = elems[i].AsInt64()
		}
	}
	out.setInts(len(elems), first[:])
	return true
}

// reusedArray is a command slot's array reply, kept from round to round: a script's reply is
// an array of the same length call after call, and its elements are written over in place
// rather than allocated again (with the any that holds the slice). Safe because a round's
// replies are read (settle) before the next round is queued, and no reader keeps the slice:
// the trace copies its integers, a decision its integers and strings.
type reusedArray struct {
	vals  []any
	boxed any // vals as an any, boxed once
}

// reply is m as goRedisReply gives it, an array in the slot's array when its length is the same.
func (r *reusedArray) reply(m *rueidis.RedisMessage) (any, error) {
	if !m.IsArray() {
		return goRedisReply(m)
	}
	return r.fill(m)
}

// fill is an array reply m as goRedisReply gives it, in the slot's array when its length is
// the same.
func (r *reusedArray) fill(m *rueidis.RedisMessage) (any, error) {
	elems, err := m.ToArray()
	if err != nil {
		return goRedisReply(m)
	}
	if len(r.vals) != len(elems) || r.boxed == nil {
		r.vals = make([]any, len(elems))
		r.boxed = r.vals
	}
	for i := range elems {
		r.vals[i] = nil
		v, err := goRedisReply(&elems[i])
		switch {
		case err == redis.Nil:
		case err != nil:
			r.vals[i] = err
		default:
			r.vals[i] = v
		}
	}
	return r.boxed, nil
}

// goRedisError is err as go-redis gives it: redis.Nil for a nil reply, an error reply as an
// error that satisfies redis.Error (so that rediserr classifies it), the rest as it is.
func goRedisError(err error) error {
	switch {
	case err == nil:
		return nil
	case rueidis.IsRedisNil(err):
		return redis.Nil
	}
	return replyError(err)
}

// replyError is an error reply as wire's, or err itself (kept apart from goRedisError, whose
// nil path would otherwise allocate errors.As's target on every call).
func replyError(err error) error {
	var reply *rueidis.RedisError
	if errors.As(err, &reply) {
		return wire.ReplyError(reply.Error())
	}
	return err
}

// goRedisReply is a reply as go-redis's Cmd.Result gives it: a nil reply is redis.Nil, an
// error reply an error as wire's (also as an array's element), a map's keys are any. The
// script strategies' replies (integers, strings, arrays of them) are read without ToAny's
// detour through its own types.
func goRedisReply(m *rueidis.RedisMessage) (any, error) {
	if err := m.Error(); err != nil {
		return nil, goRedisError(err)
	}
	switch {
	case m.IsInt64():
		n, _ := m.AsInt64()
		return boxInt(n), nil
	case m.IsString():
		return m.ToString()
	case m.IsArray():
		elems, _ := m.ToArray()
		vs := make([]any, len(elems))
		for i := range elems {
			v, err := goRedisReply(&elems[i])
			switch {
			case err == redis.Nil:
			case err != nil:
				vs[i] = err
			default:
				vs[i] = v
			}
		}
		return vs, nil
	}
	v, err := m.ToAny()
	return goRedisValue(v), err
}

// goRedisValue is what ToAny gives as go-redis gives it (maps, floats, booleans).
func goRedisValue(v any) any {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			x[i] = goRedisValue(e)
		}
	case map[string]any:
		m := make(map[any]any, len(x))
		for k, e := range x {
			m[k] = goRedisValue(e)
		}
		return m
	case error:
		return goRedisError(x)
	}
	return v
}

// smallNegative holds -1 to -16 as any: a TTL of -1 or -2 is a common reply, and Go boxes
// without allocating only 0 to 255.
var smallNegative = func() (b [16]any) {
	for i := range b {
		b[i] = int64(-1 - i)
	}
	return b
}()

func boxInt(n int64) any {
	if n < 0 && n >= -int64(len(smallNegative)) {
		return smallNegative[-1-n]
	}
	return n
}

// arg is the i-th argument a of a command as go-redis's writer writes it (ok is false for a
// type it refuses), an integer formatted again only when it differs from the last one there.
func (q *sharedQueue) arg(i int, a any) (string, bool) {
	var n int64
	switch v := a.(type) {
	case string:
		return v, true
	case int64:
		n = v
	case int:
		n = int64(v)
	default:
		return argString(a)
	}
	for len(q.numbers) <= i {
		q.numbers = append(q.numbers, formatted{text: "0"})
	}
	if f := &q.numbers[i]; f.n != n {
		f.n, f.text = n, strconv.FormatInt(n, 10)
	}
	return q.numbers[i].text, true
}

// argString is one argument as go-redis's writer writes it; ok is false for a type it refuses.
func argString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int32:
		return strconv.FormatInt(int64(v), 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case uint32:
		return strconv.FormatUint(uint64(v), 10), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 64), true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	case nil:
		return "", true
	case time.Duration:
		return strconv.FormatInt(v.Nanoseconds(), 10), true
	}
	return "", false
}
