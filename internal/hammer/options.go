package hammer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/limitctl/limitctl/internal/hammer/inject"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/limiterfile"
)

// Options are a validated hammer run: Flags.Resolve turns the command line into these.
type Options struct {
	// Stated is the limiter under test as the user stated it, before any default: the flags
	// given and the limiter file's fields (LimiterFile writes it); stated says which were given.
	Stated limiterfile.Limiter
	stated func(flag string) bool

	Limiter    limiter.Kind
	Strategies []limiter.Strategy // in display order
	Workers    int                // per strategy
	Limit      int64              // concurrency and windows: the limit; token bucket: the burst
	Duration   time.Duration      // unpaused time to run; 0 when Requests bounds the run
	Requests   int64              // decisions per strategy; 0 when Duration bounds the run
	// MaxDuration and MaxRequests cap a run that loads on while its evidence cannot back a
	// verdict yet (--max-duration, default 3×Duration; 3×Requests); at the bound: never.
	MaxDuration time.Duration
	MaxRequests int64
	Hold        time.Duration // concurrency: how long an admitted request holds its slot; windows and bucket: a think time after each admit
	Window      time.Duration // windows; the token bucket refills Limit per Window
	StaleAfter  time.Duration // concurrency: members older than this are reclaimed
	// StaleAfterGiven: --stale-after was given, so the script reclaims after it even when its
	// contract passes no stale time (a time fixed in its code).
	StaleAfterGiven bool
	Abandon         float64 // concurrency: the share of admitted requests never released (bench.Config.Abandon)
	AbandonGiven    bool    // --abandon was given: abandon even where no stale time is known
	OpenRate        float64 // decisions per second per strategy (open loop); 0 is closed loop
	Keys            int     // limiter keys per strategy
	// Conns is how many connections each strategy's workers share, their calls pipelined (a
	// script strategy's in rounds, bench's fast mode); 0 gives every worker a connection of its
	// own, one call in flight each (the truest latency).
	Conns int

	// Script names the custom strategy's file (for messages); ScriptSource is its text.
	// HTTP are the endpoints driven as strategies after the Redis ones (--http), each with the
	// keys its limiter writes when they are to be read (--http-keys).
	HTTP []HTTPTarget

	Script       string
	ScriptSource string
	NoLint       bool // run a custom script even when lint finds errors
	// Contract is how the custom script is called and its reply read (--script-keys, ...); nil is
	// the limiter's shipped contract.
	Contract *contract.Contract

	// Profile and Skew shape the load (limiter.ProfileSteady or ProfileBursty; each worker's
	// clock offset within ±Skew).
	Profile string
	Skew    time.Duration
	// NoTrace: no decision's commands are recorded, so no first_overshoot (bench.Config.NoTrace).
	NoTrace bool
	// Record names the file every call of the run is written to (--record), for limitctl judge.
	Record string
	// RedisTrace: the HTTP targets' application is traced in its Redis, by MONITOR, or through
	// a proxy listening at RedisProxy (redistrace).
	RedisTrace bool
	RedisProxy string
	// Demo: the HTTP targets are a test application's routes, started on loopback beside the
	// embedded Redis (--http-demo); their URLs name its address once it listens.
	Demo bool
	// NoDirect: a single node's script calls go through go-redis too (limiter.Config.Direct nil).
	NoDirect bool
	// Timeline: how a shared run's calls are published for the refusal judges (TimelineFlags).
	Timeline TimelineFlags

	RedisWitness bool // concurrency: count in-flight requests on Redis, shared by processes
	Assertions   []verdict.Assertion
	FailOpen     bool // admit when Redis errors or times out

	Prefix   string
	RunID    string // empty: a random one
	KeepKeys bool

	Embedded string         // without Deps.Connect: auto, redis-server or memory
	Injects  []inject.Event // fault events, in time order
	Tick     time.Duration
}

// LimiterFile is the limiter file that states the run's limiter (hammer --print-limiter): every
// field given by a flag or a file, and always the kind, the limit, and the window of a limiter
// that has one.
func (o Options) LimiterFile() ([]byte, error) {
	windowed := !o.Limiter.Describe().Releases
	return limiterfile.Marshal(o.Stated, func(flag string) bool {
		return flag == "limiter" || flag == "limit" || (flag == "window" && windowed) || (o.stated != nil && o.stated(flag))
	})
}

// Deps are what a session needs from its caller.
type Deps struct {
	// Connect opens the user's server with a pool of poolSize connections; nil starts a
	// throw-away server of Options.Embedded.
	Connect func(ctx context.Context, poolSize int) (redis.UniversalClient, bench.Target, error)
	// Timeout bounds every Redis call and the clean-up.
	Timeout time.Duration
	Now     func() time.Time
	// Notice receives one line for the user at a time: the target, lint findings, injected
	// faults, clean-up warnings. Nil drops them.
	Notice func(line string)
	// Watch consumes the snapshots while the load runs (a dashboard, progress lines) and
	// returns once the channel is closed; nil drains them.
	Watch func(ctx context.Context, live Live, snapshots <-chan bench.Snapshot) error
	// Procs sets how many cores the process schedules on, and returns what sets it back; nil
	// leaves the process alone (tests, which share one).
	Procs func(n int) (restore func())
}

// Live is what a watcher may do to the running load.
type Live struct {
	Target bench.Target
	Engine *bench.Engine // pause and resume
	// Stop ends the load early at the user's request (the dashboard's q): the run is judged
	// on what it did, as if its duration had ended then.
	Stop func()
	// Quit stops the load early as an interruption (Ctrl-C, the dashboard failing): the run
	// ends as interrupted.
	Quit func()
	// Trace is the HTTP targets' application traced in its Redis, as it goes; nil without.
	Trace *TraceView
}

func (d Deps) notice(line string) {
	if d.Notice != nil {
		d.Notice(line)
	}
}

// NewRunID returns a random run id: eight hex digits.
func NewRunID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidRunID is what a run id may be: 1-64 letters, digits, '-' or '_', so that it names
// exactly its own keys in a SCAN pattern and a hash tag.
func ValidRunID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')) {
			return false
		}
	}
	return true
}
