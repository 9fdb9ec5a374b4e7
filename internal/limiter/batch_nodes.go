package limiter

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/wire"
)

// A cluster's calls on connections of the batch's own (Config.Nodes): each call is written to
// its key's master as the cluster's slot map names it, on the batch's connection to that
// master (package wire), so that a round of one master's calls (Groups) is one write and one
// read on one connection, as on a single node (Config.Direct), with no goroutine between the
// round and the socket. What no master's connection can take goes through the shared rueidis
// client in the same round: a call without keys, a slot the map gives no master that can be
// dialled. A call a master redirected (MOVED: the slot has moved; ASK: it is moving, the key
// not here) did not run there, as the cluster's spec says of both, so sending it again through
// rueidis, which follows the redirection (ASKING first for ASK), runs it once; the map is read
// again before a later round. Nothing else is sent twice: a call whose connection failed is
// answered with that error, as on a single node, and the map is read again in case the master
// failed over.

// slotsRefresh is how often at most the strategy's batches read the slot map again: a
// resharding or a failover redirects many calls at once, and one CLUSTER SLOTS answers them all.
const slotsRefresh = 100 * time.Millisecond

// topology is the cluster's slot map a strategy's batches share, read through the shared
// client when first needed and again, at most every slotsRefresh, once a batch found it stale.
type topology struct {
	shared  SharedClient
	timeout time.Duration
	current atomic.Pointer[slotMap]
	stale   atomic.Bool
	mu      sync.Mutex // one reading at a time
	asked   time.Time  // the last reading's start
}

// slotMap is a cluster's masters as one CLUSTER SLOTS answered: each slot's master, an index
// into ids and addrs (-1: no master serves it), each master's name (its address, or its node
// id when the reply names no host that can be dialled: "?" or none, Redis's unknown endpoint)
// and the address its connections are dialled at (""  for such a master). A master is one
// address: two node ids the reply gives one address (a node restarted under a new id, the old
// one not yet forgotten) are one master, whose calls share one connection and one lane.
type slotMap struct {
	owner []int16
	ids   []string
	addrs []string
}

// slots is the cluster's slot map, read again first when it is stale and the last reading is
// older than slotsRefresh; nil when it has never been read (every call then goes through the
// shared client, which routes it).
func (t *topology) slots(ctx context.Context) *slotMap {
	m := t.current.Load()
	if m != nil && !t.stale.Load() {
		return m
	}
	// One batch reads the map; the others go on with the map as it stands (their redirected
	// calls still reach their masters through rueidis) rather than wait for the reading, which
	// can take the round's timeout on a cluster that is failing over.
	if !t.mu.TryLock() {
		return m
	}
	defer t.mu.Unlock()
	m = t.current.Load()
	if (m != nil && !t.stale.Load()) || time.Since(t.asked) < slotsRefresh {
		return m
	}
	t.asked = time.Now()
	t.stale.Store(false) // a redirection seen during the reading marks the map stale again
	fresh := readSlots(ctx, t.shared, t.timeout)
	switch {
	case fresh == nil:
		t.stale.Store(true) // read again once slotsRefresh has passed
		return m
	case m != nil && m.same(fresh):
		return m // the batches keep their lanes
	}
	t.current.Store(fresh)
	return fresh
}

// same reports whether m and o give every slot to the same address, under the same names.
func (m *slotMap) same(o *slotMap) bool {
	return slices.Equal(m.owner, o.owner) && slices.Equal(m.ids, o.ids) && slices.Equal(m.addrs, o.addrs)
}

// readSlots is the slot map CLUSTER SLOTS answers through the shared client, or nil when it
// does not (the call failed, a reply of another shape).
func readSlots(ctx context.Context, shared SharedClient, timeout time.Duration) *slotMap {
	if timeout <= 0 {
		timeout = 3 * time.Second // bounded even when the rounds are not: go-redis's default
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ranges, err := shared.DoMulti(ctx, shared.B().ClusterSlots().Build())[0].ToArray()
	if err != nil || len(ranges) == 0 {
		return nil
	}
	m := &slotMap{owner: make([]int16, wire.Slots)}
	for i := range m.owner {
		m.owner[i] = -1
	}
	index := map[string]int16{}
	for _, r := range ranges {
		fields, err := r.ToArray()
		if err != nil || len(fields) < 3 {
			return nil
		}
		start, err1 := fields[0].AsInt64()
		end, err2 := fields[1].AsInt64()
		node, err3 := fields[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(node) < 2 || start < 0 || end >= wire.Slots || start > end {
			return nil
		}
		host, _ := node[0].ToString()
		port, err := node[1].AsInt64()
		if err != nil {
			return nil
		}
		addr := ""
		if host != "" && host != "?" {
			addr = net.JoinHostPort(host, strconv.FormatInt(port, 10))
		}
		id := addr
		if id == "" && len(node) > 2 {
			id, _ = node[2].ToString() // the node id (since Redis 4)
		}
		if id == "" {
			return nil // a master the reply does not tell apart from the others
		}
		i, ok := index[id]
		if !ok {
			i = int16(len(m.ids))
			index[id] = i
			m.ids, m.addrs = append(m.ids, id), append(m.addrs, addr)
		}
		for s := start; s <= end; s++ {
			m.owner[s] = i
		}
	}
	return m
}

// isCluster reports whether shared is a cluster's rueidis client (not a master's through
// Sentinels, whose ACL may not allow CLUSTER SLOTS, and a refusal would be logged on it every run).
func isCluster(shared SharedClient) bool {
	m, ok := shared.(interface{ Mode() rueidis.ClientMode })
	return ok && m.Mode() == rueidis.ClientModeCluster
}

// nodeQueue is a round on a cluster through the batch's own connections (Config.Nodes): each
// command queued is appended to the round's lane of its key's master (a wireQueue on the
// batch's connection to it), or to the shared queue when no master's connection can take it.
// exec writes every lane, then reads every lane's replies, then sends through the shared
// client, in one DoMulti, what was queued there and what a master redirected.
type nodeQueue struct {
	topo  *topology
	opts  *redis.Options
	sq    *sharedQueue
	m     *slotMap              // the round's map
	conns map[string]*wire.Conn // the batch's connections, by address, kept round after round
	lanes []nodeLane            // the round's lanes: one per master of m
	used  []int16               // the lanes the round used, in order
	calls []nodeCall            // the round's commands, in order
	errs  []error               // each used lane's write
	// failed is each address whose last dial failed: when, and its error.
	failed map[string]dialFailure
}

type dialFailure struct {
	at  time.Time
	err error
}

type nodeLane struct {
	wq   wireQueue
	used bool
}

// nodeCall is a command of the round as it was queued, kept to be sent again if its master
// redirects it: its lane (-1: the shared queue's), its go-redis arguments and reply (Do), or its
// script call and reply (Script).
type nodeCall struct {
	lane  int16
	args  []any
	cmd   *redis.Cmd
	again *redis.Cmd // the shared queue's reply for cmd, when sent again
	call  [2]string
	keys  []string
	sargs []any
	out   *scriptReply
}

// reset starts a round: the map as it stands (read again if stale), no lane used.
func (q *nodeQueue) reset(ctx context.Context, client SharedClient, timeout time.Duration) {
	q.sq.reset(client, timeout)
	for _, i := range q.used {
		q.lanes[i].used = false
	}
	q.used, q.calls = q.used[:0], q.calls[:0]
	if m := q.topo.slots(ctx); m != q.m {
		q.m = m
		q.lanes = nil
		if m != nil {
			q.lanes = make([]nodeLane, len(m.addrs))
		}
		for addr, c := range q.conns { // a master no longer in the map: demoted, or drained
			if m == nil || !slices.Contains(m.addrs, addr) {
				c.Close()
				delete(q.conns, addr)
			}
		}
	}
}

// lane is the round's lane for key's master, its connection dialled if it has none or the one
// it had broke (a dial's error is each of the lane's commands' error); -1 when no master's
// connection can take it.
func (q *nodeQueue) lane(ctx context.Context, key string) int16 {
	if q.m == nil {
		return -1
	}
	i := q.m.owner[wire.Slot(key)]
	if i < 0 || q.m.addrs[i] == "" {
		return -1
	}
	l := &q.lanes[i]
	if !l.used {
		l.used = true
		q.used = append(q.used, i)
		l.wq.reset(q.connect(ctx, q.m.addrs[i]))
	}
	return i
}

// connect is the batch's connection to addr, dialled if it has none or the one it had broke.
// A dial that failed is not tried again for slotsRefresh, its error the answer meanwhile: a
// master the map still names but that cannot be reached (it failed, the map not yet read
// again) would otherwise hold every round up by a dial timeout.
func (q *nodeQueue) connect(ctx context.Context, addr string) (*wire.Conn, error) {
	if c := q.conns[addr]; c != nil {
		if c.Err() == nil {
			return c, nil
		}
		c.Close()
		delete(q.conns, addr)
	}
	if f, ok := q.failed[addr]; ok && time.Since(f.at) < slotsRefresh {
		return nil, f.err
	}
	o := *q.opts
	o.Addr = addr
	c, err := wire.Dial(ctx, &o)
	if err != nil {
		q.topo.stale.Store(true) // the master may have failed over
		if q.failed == nil {
			q.failed = map[string]dialFailure{}
		}
		q.failed[addr] = dialFailure{time.Now(), err}
		return nil, err
	}
	delete(q.failed, addr)
	if q.conns == nil {
		q.conns = map[string]*wire.Conn{}
	}
	q.conns[addr] = c
	return c, nil
}

func (q *nodeQueue) close() {
	for addr, c := range q.conns {
		c.Close()
		delete(q.conns, addr)
	}
}

func (q *nodeQueue) Do(ctx context.Context, args ...any) *redis.Cmd {
	i := int16(-1)
	if key, ok := firstKey(args); ok {
		i = q.lane(ctx, key)
	}
	var cmd *redis.Cmd
	if i < 0 {
		cmd = q.sq.Do(ctx, args...)
	} else {
		cmd = q.lanes[i].wq.Do(ctx, args...)
	}
	q.calls = append(q.calls, nodeCall{lane: i, args: args, cmd: cmd})
	return cmd
}

func (q *nodeQueue) Script(ctx context.Context, call [2]string, keys []string, args []any, out *scriptReply) {
	i := int16(-1)
	if len(keys) > 0 {
		i = q.lane(ctx, keys[0])
	}
	if i < 0 {
		q.sq.Script(ctx, call, keys, args, out)
	} else {
		q.lanes[i].wq.Script(ctx, call, keys, args, out)
	}
	q.calls = append(q.calls, nodeCall{lane: i, call: call, keys: keys, sargs: args, out: out})
}

// exec writes every lane's commands, reads their replies, then sends through the shared client
// what was queued there and what a master redirected, setting the redirected calls' replies.
func (q *nodeQueue) exec(ctx context.Context) {
	q.errs = q.errs[:0]
	for _, i := range q.used {
		q.errs = append(q.errs, q.lanes[i].wq.send(ctx))
	}
	for j, i := range q.used {
		wq := &q.lanes[i].wq
		wq.receive(q.errs[j])
		if wq.conn != nil && wq.conn.Err() != nil {
			q.topo.stale.Store(true) // the master may have failed over
		}
	}
	again := false
	for j := range q.calls {
		c := &q.calls[j]
		if c.lane < 0 {
			continue
		}
		switch {
		case c.out != nil && redirected(c.out.err):
			q.sq.Script(ctx, c.call, c.keys, c.sargs, c.out)
		case c.out == nil && redirected(c.cmd.Err()):
			c.again = q.sq.Do(ctx, c.args...)
		default:
			continue
		}
		again = true
	}
	if again {
		q.topo.stale.Store(true)
	}
	q.sq.exec(ctx)
	for j := range q.calls {
		if c := &q.calls[j]; c.again != nil {
			c.cmd.SetVal(c.again.Val())
			c.cmd.SetErr(c.again.Err())
			c.again = nil
		}
	}
}

// redirected reports whether err is a master's MOVED or ASK reply (as package wire gives an
// error reply): the call did not run there. A type assertion, not errors.As, whose target
// would be allocated on every call.
func redirected(err error) bool {
	e, ok := err.(wire.ReplyError)
	return ok && (strings.HasPrefix(string(e), "MOVED ") || strings.HasPrefix(string(e), "ASK "))
}

// firstKey is the key that routes a command given as go-redis's arguments, as sharedQueue.Do
// routes it: a script's first key (EVALSHA sha numkeys key...), any other command's first
// argument; false when it has none.
func firstKey(args []any) (string, bool) {
	if len(args) < 2 {
		return "", false
	}
	name, _ := args[0].(string)
	switch strings.ToLower(name) {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro":
		if len(args) < 4 {
			return "", false
		}
		if n, ok := argString(args[2]); !ok || n == "0" || n == "" || n[0] == '-' {
			return "", false
		}
		key, ok := args[3].(string)
		return key, ok
	}
	key, ok := args[1].(string)
	return key, ok
}
