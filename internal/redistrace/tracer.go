package redistrace

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/wire"
)

// Config is what a Tracer records and from where.
type Config struct {
	Identities Identities
	// Nodes are the limiter's Redis nodes to MONITOR (every master of a cluster); Proxy, when
	// set, is the address to listen on instead, forwarding every connection to Upstream.
	Nodes    []*redis.Options
	Proxy    string
	Upstream *redis.Options
	// MaxCommands bounds the commands kept (0: DefaultMaxCommands); beyond it they are counted.
	MaxCommands int
	// Timeout bounds each round trip of the tracer's own (TIME, the closing marker).
	Timeout time.Duration
}

// DefaultMaxCommands is how many commands a trace keeps: some tens of MiB, a few minutes of a
// busy endpoint's commands on its run's identities.
const DefaultMaxCommands = 1 << 20

// Sources name how a trace was taken.
const (
	SourceMonitor = "monitor"
	SourceProxy   = "proxy"
)

// Tracer records the commands of one run.
type Tracer struct {
	ids     Identities
	cfg     Config
	source  string
	base    time.Time
	mu      sync.Mutex
	cmds    []Command
	dropped int64
	steps   int64
	reqs    []Request
	begin   time.Time // the run's clock zero (Begin); zero until then
	stopped bool
	tallies []*tally // per target, as the commands come (the dashboard reads them live)

	monitors []*monitor
	proxy    *proxy
	stopOnce sync.Once
	stopErr  error
}

// Request is one HTTP request of the run, as the hammer decided it: its target and identity,
// when it was sent and answered (µs since the run began), and what the endpoint said.
type Request struct {
	Target, Identity, Worker int
	SentUs, RepliedUs        int64
	Admitted, Refused        bool // neither: an error
	// NotDecided: no decision of its own (a retried request's first attempt, a call cut as the
	// run ended).
	NotDecided bool
}

// Start starts recording: MONITOR on every node, or the proxy listening; an error means nothing
// runs (ErrMonitorRefused, a proxy address taken).
func Start(ctx context.Context, cfg Config) (*Tracer, error) {
	t := newTracer(cfg)
	if cfg.Proxy != "" {
		t.source = SourceProxy
		p, err := startProxy(t, cfg.Proxy, cfg.Upstream)
		if err != nil {
			return nil, err
		}
		t.proxy = p
		return t, nil
	}
	for i, opt := range cfg.Nodes {
		m, err := startMonitor(ctx, t, i, opt)
		if err != nil {
			t.Stop(ctx)
			return nil, err
		}
		t.monitors = append(t.monitors, m)
	}
	return t, nil
}

// newTracer is a tracer of cfg that reads nothing yet.
func newTracer(cfg Config) *Tracer {
	if cfg.MaxCommands <= 0 {
		cfg.MaxCommands = DefaultMaxCommands
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	t := &Tracer{ids: cfg.Identities, cfg: cfg, base: time.Now(), source: SourceMonitor}
	for range cfg.Identities.Targets {
		t.tallies = append(t.tallies, newTally(cfg.Identities))
	}
	return t
}

// Source is how the trace is taken: SourceMonitor or SourceProxy.
func (t *Tracer) Source() string { return t.source }

// ProxyAddr is the address the proxy listens on ("" without one).
func (t *Tracer) ProxyAddr() string {
	if t.proxy == nil {
		return ""
	}
	return t.proxy.addr
}

// Begin sets the run's clock zero: the requests' times count from it.
func (t *Tracer) Begin(begin time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.begin = begin
}

// Add records the run's requests.
func (t *Tracer) Add(reqs ...Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reqs = append(t.reqs, reqs...)
	for _, r := range reqs {
		if r.Target >= 0 && r.Target < len(t.tallies) && !r.NotDecided {
			t.tallies[r.Target].request(r)
		}
	}
}

// Stop ends the recording once everything Redis ran so far is read (MONITOR: each node's
// stream has reached a marker sent now), or the proxy is closed. Commands sent later are not
// recorded. Stop may be called more than once.
func (t *Tracer) Stop(ctx context.Context) error {
	t.stopOnce.Do(func() { t.stopErr = t.stop(ctx) })
	return t.stopErr
}

// stop drains every source, then shuts the door: what a MONITOR stream reads before its marker
// ran before Stop was called, so it is kept; it is the backlog of a stream that fell behind a
// busy run, its last commands (shutting the door first lost them).
func (t *Tracer) stop(ctx context.Context) error {
	defer func() {
		t.mu.Lock()
		t.stopped = true
		t.mu.Unlock()
	}()
	var errs []error
	for _, m := range t.monitors {
		m.stop(ctx, t.cfg.Timeout)
		if m.err != nil {
			errs = append(errs, fmt.Errorf("MONITOR of node %d ended early: %w", m.node, m.err))
		}
	}
	if t.proxy != nil {
		t.proxy.close()
	}
	return errors.Join(errs...)
}

// emit keeps commands that ran together (a MULTI's, or one), while there is room.
func (t *Tracer) emit(cmds []Command) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	if len(t.cmds)+len(cmds) > t.cfg.MaxCommands {
		t.dropped += int64(len(cmds))
		return
	}
	t.cmds = append(t.cmds, cmds...)
	t.tallies[cmds[0].Target].step(cmds)
}

// newStep numbers a script call or a transaction.
func (t *Tracer) newStep() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.steps++
	return t.steps
}

// sinceBase is a local instant in µs since the tracer's base.
func (t *Tracer) sinceBase(at time.Time) int64 { return at.Sub(t.base).Microseconds() }

// measureClock is the node's clock minus this process's (µs since base), from the TIME round
// trip of the shortest of five: the server read its clock within it.
func (t *Tracer) measureClock(ctx context.Context, conn *wire.Conn) (int64, error) {
	best, offset := int64(-1), int64(0)
	for range 5 {
		ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
		sent := t.sinceBase(time.Now())
		v, err := conn.Call(ctx, "time")
		answered := t.sinceBase(time.Now())
		cancel()
		if err != nil {
			return 0, fmt.Errorf("TIME: %w", err)
		}
		server, err := timeReply(v)
		if err != nil {
			return 0, err
		}
		if rtt := answered - sent; best < 0 || rtt < best {
			best, offset = rtt, server-(sent+answered)/2
		}
	}
	return offset, nil
}

// timeReply reads TIME's reply ["seconds", "microseconds"] as µs since the epoch.
func timeReply(v any) (int64, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != 2 {
		return 0, fmt.Errorf("TIME replied %v", v)
	}
	var parts [2]int64
	for i, e := range arr {
		s, ok := e.(string)
		n, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil {
			return 0, fmt.Errorf("TIME replied %v", v)
		}
		parts[i] = n
	}
	return parts[0]*1_000_000 + parts[1], nil
}

// Export is every command kept, in the order kept, its times in µs since the run began (a
// --record file's).
func (t *Tracer) Export() []Command {
	t.mu.Lock()
	defer t.mu.Unlock()
	beginUs := t.sinceBase(t.begin)
	out := make([]Command, len(t.cmds))
	for i, c := range t.cmds {
		c.AtUs -= beginUs
		if c.RepliedUs != 0 {
			c.RepliedUs -= beginUs
		}
		out[i] = c
	}
	return out
}

// Recorded is a tracer of commands a run recorded (Export's, from a --record file), for the
// commands behind a first overshoot when the run is judged again.
func Recorded(ids Identities, source string, cmds []Command) *Tracer {
	t := newTracer(Config{Identities: ids})
	t.source, t.begin, t.stopped, t.cmds = source, t.base, true, cmds
	return t
}
