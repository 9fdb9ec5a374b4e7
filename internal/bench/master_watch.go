package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/redisconn"
)

// A concurrency limiter frees a slot with a write (the release). Redis replicates writes
// asynchronously, so a master replaced mid-run (a failover, or a restart from a snapshot) may
// have acknowledged a release its successor never saw: the successor rightly holds that slot
// until stale-after reclaims it, while the hammer saw it released. Refusals there would be
// blamed on a correct limiter. (A lost write of the window and bucket limiters only loosens
// them: a count, a log, a TAT or a tokens-and-time state as of an earlier moment never admits
// less, so they are judged across a failover.) So the concurrency limiter's refusals are judged
// only as far as the masters are confirmed unchanged: every call sent before a read of their
// replication ids that found them as they were at the start went to the masters the run began
// with (a client moves to a new master for good), whose state was whole.

// masterWatchEvery is how often the masters are read; the concurrency judging lags by it.
const masterWatchEvery = 250 * time.Millisecond

// masterWatch confirms, read by read, that the target's masters are the ones the run began on.
type masterWatch struct {
	read  func(ctx context.Context) (string, error)
	begin time.Time
	base  string

	confirmed atomic.Int64 // µs since begin: every call sent before it went to the original masters
	mu        sync.Mutex
	why       string // why judging stopped; empty while the masters are unchanged
}

// newMasterWatch reads the masters' fingerprint before the load; a read that fails leaves no
// refusal judgeable, and says why.
func newMasterWatch(ctx context.Context, read func(context.Context) (string, error), timeout time.Duration) *masterWatch {
	w := &masterWatch{read: read}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	base, err := read(rctx)
	if err != nil {
		w.why = "could not read the masters' replication ids (INFO replication: " + oneLineError(err) + "), so a failover, which may lose a release a master acknowledged, cannot be ruled out"
	}
	w.base = base
	return w
}

// start begins the reads once the load begins at begin; they end with ctx.
func (w *masterWatch) start(ctx context.Context, begin time.Time) {
	w.begin = begin
	if w.stopped() {
		return
	}
	go func() {
		t := time.NewTicker(masterWatchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !w.check(ctx) {
					return
				}
			}
		}
	}()
}

// check reads the masters once; false once they changed (or could not be read).
func (w *masterWatch) check(ctx context.Context) bool {
	if w.stopped() {
		return false
	}
	issued := time.Since(w.begin).Microseconds()
	rctx, cancel := context.WithTimeout(ctx, statsTimeout)
	defer cancel()
	fp, err := w.read(rctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err != nil && ctx.Err() != nil:
		return false // the run is over
	case err != nil:
		w.why = fmt.Sprintf("the masters could not be read at %s (INFO replication: %s), so a failover cannot be ruled out: refusals from then on are not judged",
			time.Duration(issued)*time.Microsecond, oneLineError(err))
	case fp != w.base:
		w.why = fmt.Sprintf("a master was replaced or restarted by %s (its replication id changed), which may lose a release it acknowledged: refusals from then on are not judged",
			human.Elapsed(time.Duration(issued)*time.Microsecond))
	default:
		w.confirmed.Store(issued)
		return true
	}
	return false
}

// finish reads the masters once more at the end, so calls of the last moments are judged too.
func (w *masterWatch) finish() { w.check(context.Background()) }

func (w *masterWatch) stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why != ""
}

// reason is why some refusals are not judged; empty while the masters are unchanged.
func (w *masterWatch) reason() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

func oneLineError(err error) string { return trimMessage(err.Error()) }

// MasterFingerprint is the replication id of every master of the target, sorted: it changes
// when a master is replaced (a replica promoted takes a new one) or restarted.
func MasterFingerprint(ctx context.Context, rdb redis.UniversalClient) (string, error) {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(masters))
	for _, m := range masters {
		info, err := m.Info(ctx, "replication").Result()
		if err != nil {
			return "", err
		}
		id := ""
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "master_replid:"); ok {
				id = v
			}
		}
		if id == "" {
			return "", errors.New("no master_replid in INFO replication")
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return strings.Join(ids, ","), nil
}
