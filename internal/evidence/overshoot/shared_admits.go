package overshoot

import (
	"context"
	"math"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/tally"
)

// How shared admits move: each process adds its admits per millisecond to one Redis hash per
// key and chunk of time every flushInterval; each chunk is judged once it is older than the
// call timeout plus the flush interval plus a margin, when every process's admits for it are in.
const (
	flushInterval = 100 * time.Millisecond
	judgeInterval = time.Second
	chunkMs       = 1000
)

// SharedAdmits lets the processes of one run (--run-id with --witness redis) judge a window or
// bucket limiter together: every process shares its admitted now values in Redis, and every
// process judges all of them, chunk by chunk, with the same checker it runs on its own admits.
// Redis holds a chunk for two windows plus the judging lag, so its memory follows the admits of
// that span; each process sends one HINCRBY per millisecond that saw admits and reads each chunk
// once.
type SharedAdmits struct {
	rdb                   redis.UniversalClient
	cfg                   SharedConfig
	lagMs, ttl, historyMs int64
	timeout               time.Duration

	mu   sync.Mutex // guards keys' pending counts and the list of keys
	keys []*sharedKey

	stop     chan struct{}
	stopped  sync.WaitGroup
	finished sync.Once
}

type sharedKey struct {
	name      string
	pending   map[int64]int64 // own admits not yet sent, per ms (guarded by SharedAdmits.mu)
	local     Checker         // this process's admits, live
	joint     Checker         // every process's admits, fed chunk by chunk in time order
	nextChunk int64           // the first chunk not yet judged
	jointRes  atomic.Pointer[CheckResult]
}

// SharedConfig is how long the shared admits of one strategy are kept, and where they live
// (the rule they are judged by is each key's joint checker, SharedAdmits.Checker).
type SharedConfig struct {
	Window  time.Duration
	Horizon time.Duration // the call timeout
	Now     func() time.Time
	// ChunkKey names the hash of one limiter key's admits in one chunk of time. The engine names
	// no key of a run itself: the run's key scheme builds this name, as it builds the limiter
	// keys (Config.KeyFor), so that its clean-up, which deletes only the names it recognises,
	// finds the chunks. The name must carry the limiter key's hash tag: a chunk then lives on
	// the key's cluster node.
	ChunkKey func(key string, chunk int64) string
}

// NewSharedAdmits starts sharing for one strategy. Stop it with the Finish of any of its
// checkers (the engine finishes them all at the end of the run).
func NewSharedAdmits(rdb redis.UniversalClient, cfg SharedConfig) *SharedAdmits {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	lag := cfg.Horizon.Milliseconds() + flushInterval.Milliseconds() + 1000
	s := &SharedAdmits{
		rdb: rdb, cfg: cfg, timeout: max(cfg.Horizon, time.Second),
		lagMs: lag, ttl: 2*cfg.Window.Milliseconds() + lag + chunkMs + 10_000, historyMs: cfg.Window.Milliseconds() + chunkMs,
		stop: make(chan struct{}),
	}
	s.stopped.Add(1)
	go s.loop()
	return s
}

// Checker returns the checker of one key: local judges this process's admits live, joint (a
// checker of the same rule, fed in time order) every process's once settled.
func (s *SharedAdmits) Checker(key string, local, joint Checker) Checker {
	k := &sharedKey{name: key, pending: map[int64]int64{}, local: local,
		joint:     joint,
		nextChunk: tally.FloorDiv(s.cfg.Now().UnixMilli()-s.historyMs, chunkMs)}
	k.jointRes.Store(&CheckResult{})
	s.mu.Lock()
	s.keys = append(s.keys, k)
	s.mu.Unlock()
	return &sharedChecker{s: s, k: k}
}

func (s *SharedAdmits) loop() {
	defer s.stopped.Done()
	flush := time.NewTicker(flushInterval)
	defer flush.Stop()
	lastJudge := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case <-flush.C:
			s.flush()
			if time.Since(lastJudge) >= judgeInterval {
				s.judge(s.cfg.Now().UnixMilli() - s.lagMs)
				lastJudge = time.Now()
			}
		}
	}
}

// flush sends the admits counted since the last flush.
func (s *SharedAdmits) flush() {
	type sent struct {
		key    string
		counts map[int64]int64
	}
	var batch []sent
	s.mu.Lock()
	for _, k := range s.keys {
		if len(k.pending) > 0 {
			batch = append(batch, sent{k.name, k.pending})
			k.pending = map[int64]int64{}
		}
	}
	s.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	pipe := s.rdb.Pipeline()
	for _, b := range batch {
		chunks := map[int64]bool{}
		for ms, n := range b.counts {
			c := tally.FloorDiv(ms, chunkMs)
			pipe.HIncrBy(ctx, s.cfg.ChunkKey(b.key, c), strconv.FormatInt(ms, 10), n)
			chunks[c] = true
		}
		for c := range chunks {
			pipe.PExpire(ctx, s.cfg.ChunkKey(b.key, c), time.Duration(s.ttl)*time.Millisecond)
		}
	}
	pipe.Exec(ctx) //nolint:errcheck // a lost flush only hides admits from the joint verdict, never invents any
}

// judge feeds every whole chunk that ends at or before through into each key's joint checker.
func (s *SharedAdmits) judge(through int64) {
	s.mu.Lock()
	keys := append([]*sharedKey(nil), s.keys...)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	type read struct {
		k     *sharedKey
		chunk int64
		cmd   *redis.MapStringStringCmd
	}
	var reads []read
	pipe := s.rdb.Pipeline()
	for _, k := range keys {
		for c := k.nextChunk; (c+1)*chunkMs-1 <= through; c++ {
			reads = append(reads, read{k, c, pipe.HGetAll(ctx, s.cfg.ChunkKey(k.name, c))})
		}
	}
	if len(reads) == 0 {
		return
	}
	pipe.Exec(ctx) //nolint:errcheck // each read is checked below
	for _, r := range reads {
		if r.chunk != r.k.nextChunk {
			continue // an earlier chunk of this key failed: judge nothing after it
		}
		fields, err := r.cmd.Result()
		if err != nil {
			continue
		}
		type msCount struct{ ms, n int64 }
		admits := make([]msCount, 0, len(fields))
		for f, v := range fields {
			ms, err1 := strconv.ParseInt(f, 10, 64)
			n, err2 := strconv.ParseInt(v, 10, 64)
			if err1 == nil && err2 == nil && n > 0 && n < math.MaxInt32 {
				admits = append(admits, msCount{ms, n})
			}
		}
		sort.Slice(admits, func(i, j int) bool { return admits[i].ms < admits[j].ms })
		for _, a := range admits {
			for i := int64(0); i < a.n; i++ {
				r.k.joint.Admit(evidence.Decision{AtMs: a.ms, LateUs: -1}, func() {}) // another process's lateness is unknown
			}
		}
		r.k.nextChunk++
		res := r.k.joint.Result()
		r.k.jointRes.Store(&res)
	}
}

// finish stops the loop, sends what is left and judges every chunk up to now: the process that
// finishes last then sees every process's admits.
func (s *SharedAdmits) finish() {
	s.finished.Do(func() {
		close(s.stop)
		s.stopped.Wait()
		s.flush()
		s.judge(s.cfg.Now().UnixMilli() + chunkMs)
	})
}

type sharedChecker struct {
	Plain
	s *SharedAdmits
	k *sharedKey
}

// Admit implements Checker: this process knows how late its own admit may be, so its own
// evidence judges it by that (the bucket's tiers); the joint evidence, which cannot know the
// other processes' lateness, judges it as any other.
func (c *sharedChecker) Admit(d evidence.Decision, kept func()) Outcome {
	out := c.k.local.Admit(d, kept)
	c.s.mu.Lock()
	c.k.pending[d.AtMs]++
	c.s.mu.Unlock()
	return out
}

// OnFirstOver implements Checker: this process's admits behind the first overshoot
// its own or the joint evidence found (the joint count holds other processes' admits too).
func (c *sharedChecker) OnFirstOver(report func(Moment)) {
	c.k.local.OnFirstOver(report)
	c.k.joint.OnFirstOver(func(m Moment) { m.Shared = true; report(m) })
}

// ShareHistory implements Checker.
func (c *sharedChecker) ShareHistory(b *HistoryBudget) {
	c.k.local.ShareHistory(b)
	c.k.joint.ShareHistory(b)
}

// Result implements Checker: this process's live verdict, raised by the joint one.
func (c *sharedChecker) Result() CheckResult {
	return combine(c.k.local.Result(), *c.k.jointRes.Load())
}

// Finish implements Checker.
func (c *sharedChecker) Finish() CheckResult {
	c.s.finish()
	return combine(c.k.local.Finish(), *c.k.jointRes.Load())
}

// combine raises a process's own verdict by the joint one: the joint verdict counts every
// process's admits, this process's included, but lags by the judging horizon.
func combine(local, joint CheckResult) CheckResult {
	local.Peak = max(local.Peak, joint.Peak)
	local.Overshoot = max(local.Overshoot, joint.Overshoot)
	local.OvershootEvent = max(local.OvershootEvent, joint.OvershootEvent)
	return local
}

// Close stops sharing (as Finish does) for a run that ended before its checkers finished.
func (s *SharedAdmits) Close() { s.finish() }
