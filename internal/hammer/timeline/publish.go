// Package timeline judges a shared run's refusals on the server's clock: each process
// publishes its calls with its clock bounded against the server's TIME, and hammer report
// places every process's calls on one timeline and judges them together.
package timeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/clocksync"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/hammer/runkeys"
)

// How a process publishes: its calls every flushInterval, a TIME measure every measureEvery
// (the best of measureTrips round trips; measureFirst before the load), and at most
// maxPending flushes kept while Redis refuses them.
const (
	flushInterval = 100 * time.Millisecond
	measureEvery  = 250 * time.Millisecond
	measureTrips  = 3
	measureFirst  = 8
	maxPending    = 300
	flushesPerKey = 10
)

// Config is where and how a process publishes.
type Config struct {
	Keys    runkeys.Scheme
	Process string        // this process's name among the run's (its summary's)
	KeyN    int           // limiter keys per strategy
	TTL     time.Duration // how long the evidence stays: as long as the summaries
	Timeout time.Duration // bounds each Redis call
	// Read asks the server's TIME; nil asks it through the publisher's client. A test widens
	// the bound by delaying it (hidden --clock-probe-delay).
	Read clocksync.Reader
	// MaxBytes bounds the calls a process publishes (0: no bound): past it, it publishes
	// nothing more and says so (budgetField), and its refusals after are not judged.
	MaxBytes int64
}

// presence is the meta field every process writes first (no strategy has the name); budgetField
// the one a process writes when its calls reached Config.MaxBytes, with the bound in bytes.
const (
	presence    = "~process"
	budgetField = "~budget"
)

// Meta is what one strategy's judges are built from, as its process ran it.
type Meta struct {
	Spec  refusal.Spec
	Keys  int
	Begin int64 // µs from the process's clock base to the run's begin
}

// Publisher publishes one process's calls and clock for every strategy of a shared run.
type Publisher struct {
	rdb   redis.UniversalClient
	cfg   Config
	clock *clocksync.Clock
	base  time.Time

	mu      sync.Mutex
	sinks   []*Sink
	pending [][2]any           // key, element: flushes not yet in Redis, in order
	samples []clocksync.Sample // measured, not yet in Redis
	latest  clocksync.Sample
	gaveUp  bool // Redis refused too many flushes, or the calls reached MaxBytes: nothing more is published
	flushes int64
	bytes   int64 // of calls published
	running bool  // Start measured the clock: the sinks publish

	stop     chan struct{}
	done     sync.WaitGroup
	finished sync.Once
}

// New prepares a process's publishing: its strategies' sinks are taken before Start.
func New(rdb redis.UniversalClient, cfg Config) *Publisher {
	if cfg.Read == nil {
		cfg.Read = func(ctx context.Context) (time.Time, error) { return rdb.Time(ctx).Result() }
	}
	base := time.Now()
	return &Publisher{rdb: rdb, cfg: cfg, clock: clocksync.New(base), base: base, stop: make(chan struct{})}
}

// Start measures the process's clock against the server's TIME and starts publishing; after
// an error nothing is published (the report then judges no refusal of the run).
func (p *Publisher) Start(ctx context.Context) error {
	// Named before anything else: a reader then knows of this process, whatever it publishes.
	meta := p.cfg.Keys.CallsKey(p.cfg.Process, runkeys.CallsMeta)
	pipe := p.rdb.TxPipeline()
	pipe.HSet(ctx, meta, presence, "1")
	pipe.PExpire(ctx, meta, p.cfg.TTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	if err := p.measure(ctx, measureFirst); err != nil {
		return err
	}
	p.mu.Lock()
	p.running = true
	p.mu.Unlock()
	p.done.Add(1)
	go p.loop()
	return nil
}

// measure adds the best of n TIME round trips to the clock, to be published. A clock that
// stepped is published all the same: the reader finds the step itself and judges nothing.
func (p *Publisher) measure(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout*time.Duration(n))
	defer cancel()
	err := p.clock.Measure(ctx, p.cfg.Read, n)
	if s, ok := p.clock.Last(); ok {
		p.mu.Lock()
		if s != p.latest {
			p.samples, p.latest = append(p.samples, s), s
		}
		p.mu.Unlock()
	}
	if errors.Is(err, clocksync.ErrStepped) {
		return nil
	}
	return err
}

func (p *Publisher) loop() {
	defer p.done.Done()
	tick := time.NewTicker(flushInterval)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			if time.Since(last) >= measureEvery {
				p.measure(context.Background(), measureTrips) //nolint:errcheck // a missed measure only widens the bound
				last = time.Now()
			}
			p.flush()
		}
	}
}

// Sink is one strategy's calls on their way to Redis (bench.CallSink).
type Sink struct {
	p    *Publisher
	name string

	mu      sync.Mutex
	enc     encoder
	server  bool
	mark    int64
	started bool
}

// Sink is the CallSink of one strategy.
func (p *Publisher) Sink(strategy string) *Sink {
	s := &Sink{p: p, name: strategy}
	p.mu.Lock()
	p.sinks = append(p.sinks, s)
	p.mu.Unlock()
	return s
}

// Start implements bench.CallSink: the strategy's judges' spec goes to Redis before any call.
func (s *Sink) Start(begin time.Time, spec refusal.Spec) {
	s.p.mu.Lock()
	running := s.p.running
	s.p.mu.Unlock()
	if !running {
		return
	}
	meta := Meta{Spec: spec, Keys: s.p.cfg.KeyN, Begin: s.p.clock.Local(begin)}
	doc, _ := json.Marshal(meta) // plain numbers and strings
	ctx, cancel := context.WithTimeout(context.Background(), s.p.cfg.Timeout)
	defer cancel()
	key := s.p.cfg.Keys.CallsKey(s.p.cfg.Process, runkeys.CallsMeta)
	pipe := s.p.rdb.TxPipeline()
	pipe.HSet(ctx, key, s.name, doc)
	pipe.PExpire(ctx, key, s.p.cfg.TTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return // without its meta the reader judges none of this strategy's refusals
	}
	s.mu.Lock()
	s.enc.offset, s.server, s.started = meta.Begin, spec.Server, true
	s.mark = 0
	s.mu.Unlock()
}

// Add implements bench.CallSink.
func (s *Sink) Add(d evidence.Decision) {
	s.mu.Lock()
	if s.started { // else nothing of it is published: kept nowhere
		s.enc.add(d, s.server)
	}
	s.mu.Unlock()
}

// Mark implements bench.CallSink.
func (s *Sink) Mark(lowWater int64) {
	s.mu.Lock()
	s.mark = lowWater
	s.mu.Unlock()
}

// flush sends every strategy's calls since the last flush, and the clock's new samples, in one
// transaction after whatever Redis refused before: a flush is in Redis only after every earlier
// one, so a reader never sees a mark without the calls it covers.
func (p *Publisher) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gaveUp {
		return
	}
	if p.cfg.MaxBytes > 0 && p.bytes >= p.cfg.MaxBytes {
		// Every write to Redis is bounded: the reader stops judging at the last mark published,
		// and finds why in the meta.
		p.giveUp()
		ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Timeout)
		defer cancel()
		meta := p.cfg.Keys.CallsKey(p.cfg.Process, runkeys.CallsMeta)
		pipe := p.rdb.TxPipeline()
		pipe.HSet(ctx, meta, budgetField, strconv.FormatInt(p.cfg.MaxBytes, 10))
		pipe.PExpire(ctx, meta, p.cfg.TTL)
		pipe.Exec(ctx) //nolint:errcheck // without it the reader says the process stopped, not why
		return
	}
	// The keys are numbered densely, flushesPerKey flushes each (about a second of the run's),
	// so a reader finds a missing one.
	second := p.flushes / flushesPerKey
	p.flushes++
	for _, s := range p.sinks {
		s.mu.Lock()
		if s.started {
			p.pending = append(p.pending, [2]any{p.cfg.Keys.Calls(p.cfg.Process, s.name, second), s.enc.take(s.mark)})
		}
		s.mu.Unlock()
	}
	samples := p.samples
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Timeout)
	defer cancel()
	pipe := p.rdb.TxPipeline()
	for _, e := range p.pending {
		pipe.RPush(ctx, e[0].(string), e[1])
		pipe.PExpire(ctx, e[0].(string), p.cfg.TTL)
	}
	clockKey := p.cfg.Keys.CallsKey(p.cfg.Process, runkeys.CallsClock)
	for _, s := range samples {
		pipe.RPush(ctx, clockKey, fmt.Sprintf("%d %d %d", s.Sent, s.Answered, s.Server))
	}
	pipe.PExpire(ctx, clockKey, p.cfg.TTL)
	if _, err := pipe.Exec(ctx); err != nil {
		if len(p.pending) > maxPending {
			p.giveUp()
		}
		return
	}
	for _, e := range p.pending {
		p.bytes += int64(len(e[1].([]byte)))
	}
	p.pending, p.samples = p.pending[:0], p.samples[len(samples):]
}

// giveUp publishes nothing more: the reader sees this process stop at its last flush, and
// judges no refusal after it. Called with p.mu held.
func (p *Publisher) giveUp() {
	p.gaveUp, p.pending = true, nil
	for _, s := range p.sinks {
		s.mu.Lock()
		s.started, s.enc = false, encoder{}
		s.mu.Unlock()
	}
}

// Finish stops publishing once the engine has marked every strategy complete: a last measure
// (the bound then covers the whole run) and a last flush.
func (p *Publisher) Finish() {
	p.finished.Do(func() {
		p.mu.Lock()
		running := p.running
		p.mu.Unlock()
		if !running {
			return
		}
		close(p.stop)
		p.done.Wait()
		p.measure(context.Background(), measureTrips) //nolint:errcheck // a missed measure only widens the bound
		p.flush()
	})
}

// parseSample reads a sample as flush writes it.
func parseSample(v string) (clocksync.Sample, bool) {
	f := strings.Fields(v)
	if len(f) != 3 {
		return clocksync.Sample{}, false
	}
	var n [3]int64
	for i := range f {
		x, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return clocksync.Sample{}, false
		}
		n[i] = x
	}
	return clocksync.Sample{Sent: n[0], Answered: n[1], Server: n[2]}, true
}
