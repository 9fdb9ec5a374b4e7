package hammer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Several hammer processes may share one run id (--run-id, e.g. with --witness redis): each
// drives the same keys. None may delete them while another still runs, so the processes of a
// run register in a sorted set of process tokens scored by heartbeat; the last one to leave
// deletes the run's keys. A process that died stops beating and ages out after
// participantTimeout, so its keys are still cleaned up by the next one to finish.

// heartbeat is how often a running process refreshes its entry.
const heartbeat = time.Second

// closingMember marks a run whose last process is deleting the keys: a process that joins
// then would have its keys deleted under it, so it is refused instead.
const closingMember = "~closing"

// joinScript registers ARGV[1] at ARGV[2] (ms), forgetting entries not refreshed since
// ARGV[3]; returns 0 when the run is being cleaned up (the caller must not start), else the
// number of processes now in the run.
var joinScript = redis.NewScript(`
local set = KEYS[1]
redis.call('ZREMRANGEBYSCORE', set, '-inf', '(' .. ARGV[3])
if redis.call('ZSCORE', set, '` + closingMember + `') then return 0 end
-- A true no-op (the mark is absent here), sent so a user who may not ZREM, which the leave
-- needs, is refused now and not at the end.
redis.call('ZREM', set, '` + closingMember + `')
redis.call('ZADD', set, ARGV[2], ARGV[1])
redis.call('PEXPIRE', set, ARGV[4])
return redis.call('ZCARD', set)
`)

// leaveScript removes ARGV[1], forgets entries not refreshed since ARGV[3], and returns how
// many processes still run; at 0 it marks the run as closing (the caller deletes the keys).
var leaveScript = redis.NewScript(`
local set = KEYS[1]
redis.call('ZREM', set, ARGV[1])
redis.call('ZREMRANGEBYSCORE', set, '-inf', '(' .. ARGV[3])
local n = redis.call('ZCARD', set)
if n == 0 then
  redis.call('ZADD', set, ARGV[2], '` + closingMember + `')
  redis.call('PEXPIRE', set, ARGV[4])
end
return n
`)

// participation is this process's entry in a shared run.
type participation struct {
	rdb     redis.UniversalClient
	key     string
	token   string
	timeout time.Duration // a dead process ages out after this without a heartbeat
	now     func() time.Time
	stop    chan struct{}
	done    sync.WaitGroup
}

// errRunClosing says another process of the run is deleting its keys right now.
var errRunClosing = errors.New("is being cleaned up by the last process of an earlier run with this id; start again in a moment")

func (p *participation) args() []any {
	now := p.now().UnixMilli()
	return []any{p.token, now, now - p.timeout.Milliseconds(), (2 * p.timeout).Milliseconds()}
}

// join registers this process and keeps its heartbeat until leave.
func join(ctx context.Context, rdb redis.UniversalClient, key string, callTimeout time.Duration, now func() time.Time) (*participation, error) {
	var b [6]byte
	rand.Read(b[:])
	p := &participation{
		rdb: rdb, key: key, token: hex.EncodeToString(b[:]), now: now,
		timeout: 5*heartbeat + 2*callTimeout, stop: make(chan struct{}),
	}
	// EVAL, then EVALSHA as every later heartbeat and the leave will: a user short of either
	// is refused here, before any load (registering twice is the same ZADD).
	if err := joinScript.Eval(ctx, rdb, []string{key}, p.args()...).Err(); err != nil {
		return nil, err
	}
	n, err := joinScript.EvalSha(ctx, rdb, []string{key}, p.args()...).Int64()
	if err != nil {
		rdb.ZRem(ctx, key, p.token) // registered by the EVAL: do not stay as a process that never ends
		return nil, err
	}
	if n == 0 {
		return nil, errRunClosing
	}
	p.done.Add(1)
	go p.beat(callTimeout)
	return p, nil
}

func (p *participation) beat(callTimeout time.Duration) {
	defer p.done.Done()
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			joinScript.Run(ctx, p.rdb, []string{p.key}, p.args()...) // a missed beat is retried next second
			cancel()
		}
	}
}

// leave ends the heartbeat and reports how many other processes of the run still run; at 0
// this process is the last and must delete the keys.
func (p *participation) leave(callTimeout time.Duration) (int64, error) {
	close(p.stop)
	p.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	n, err := leaveScript.Run(ctx, p.rdb, []string{p.key}, p.args()...).Int64()
	if err != nil {
		return 0, fmt.Errorf("could not tell whether other processes still use the run's keys: %w", err)
	}
	return n, nil
}
