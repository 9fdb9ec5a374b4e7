// Package limiter implements the Redis rate limiters, each in several strategies (ways of
// running the same decision), behind one small interface that the hammer drives.
//
// A limiter kind is a value, not a switch: each kind declares itself once, as a Description in
// its own file (kind_concurrency.go, kind_fixed_window.go, ...), and every consumer ranges over
// the registry (Kinds) or asks Kind.Describe: the strategies here, the hammer's evidence, load
// and clean-up, the dashboard's and the report's labels, inspect's name for its keys, the help
// texts and completions.
//
// To add a fifth kind:
//  1. write its script in scripts/ and list it in scripts/embed.go with Limiter: true (it then
//     ships in the Functions library too);
//  2. write its evidence in a folder of its own, internal/evidence/kind/<name> (its Model:
//     checkers on the stamps and over intervals, refusal rule, power, how it is told);
//  3. write kind_<name>.go: its Kind constant and its Description (what --limit counts, the
//     script's name and calling contract, the strategies that apply, its Model, the commands
//     one decision runs, inspect's kind for its keys, the labels, the default load) with its
//     client-side step, the script's KEYS and ARGV, and its reply;
//  4. add it to kinds in kinds.go, in display order.
//
// The conformance suite, the hammer's clean-up test, inspect's test of the shipped limiters'
// keys and the test that every kind has a model range over Kinds, so they cover it at once.
package limiter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/limitctl/limitctl/internal/contract"
)

// Strategy is a way of running a limiter's decision against Redis.
type Strategy string

// The strategies.
const (
	Naive       Strategy = "naive"         // separate commands: check, then update
	Multi       Strategy = "multi"         // reads and writes in MULTI/EXEC, decided by the client in between
	Watch       Strategy = "watch"         // optimistic: WATCH, read, MULTI/EXEC, retry on abort
	Lua         Strategy = "lua"           // the script through EVALSHA, falling back to EVAL on NOSCRIPT
	Eval        Strategy = "eval"          // the script sent whole with EVAL on every call
	Function    Strategy = "function"      // the script as a Redis 7 Function, through FCALL
	LuaTSMember Strategy = "lua-ts-member" // the script with the millisecond timestamp as member (not unique)
	Custom      Strategy = "custom"        // a caller-supplied script with the same contract
)

// RunsScript reports whether the strategy's decision is one script call (EVALSHA, EVAL, FCALL).
func (s Strategy) RunsScript() bool {
	switch s {
	case Lua, Eval, Function, LuaTSMember, Custom:
		return true
	}
	return false
}

// Strategies lists every strategy in display order.
func Strategies() []Strategy {
	return []Strategy{Naive, Multi, Watch, Lua, Eval, Function, LuaTSMember, Custom}
}

// ParseStrategy accepts a strategy name.
func ParseStrategy(s string) (Strategy, error) {
	for _, st := range Strategies() {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown strategy %q (want one of %s)", s, strings.Join(Names(Strategies()), ", "))
}

// Config holds the parameters of one limiter.
type Config struct {
	Limit      int64         // concurrency, fixed and sliding window: how many
	Window     time.Duration // fixed and sliding window
	StaleAfter time.Duration // concurrency: members older than this are reclaimed
	Rate       float64       // token bucket: tokens per second
	Burst      int64         // token bucket: capacity
	Cost       int64         // token bucket: tokens per request (1 if zero)
	// CustomSource is the script for the custom strategy.
	CustomSource string
	// Contract is how the custom script is called and its reply read; nil is the limiter's
	// shipped contract (DefaultContract).
	Contract *contract.Contract
	// NoTimeMark: the virtual clock answers each call's TIME with its own stamp, keeping no
	// per-key mark that stops TIME going back (virtual_clock.go); for a run whose keys other
	// processes share, with clocks of their own.
	NoTimeMark bool
	// MaxRetries bounds the watch strategy's retries of one decision (1000 if zero).
	MaxRetries int
	// Direct is the single node a Batch of a script strategy writes its calls to, on a
	// connection of its own dialled with these options (package wire), instead of through the
	// client's pipelines: the hammer's hot path. Nil keeps go-redis (a cluster, which follows
	// MOVED and ASK; a master found through Sentinels; a client with hooks of its own).
	Direct *redis.Options
	// Shared is the rueidis client a Batch of a script strategy sends its rounds through when
	// there is no Direct (a cluster, whose calls it routes to their keys' masters, following
	// MOVED and ASK; a master found through Sentinels, followed across failovers), each round
	// one DoMulti bounded by SharedTimeout. Nil keeps go-redis's pipelines (a client with hooks
	// of its own).
	Shared        SharedClient
	SharedTimeout time.Duration
	// Nodes, with a cluster's Shared, are the options a master's own connection is dialled
	// with, its Addr the one CLUSTER SLOTS gives (package wire): a Batch writes each call to its
	// key's master on a connection of its own, as Direct does on a single node, and sends
	// through Shared only what no master's connection can take (a call without keys, a slot no
	// master serves) or what a master redirected (MOVED, ASK), which rueidis follows.
	Nodes *redis.Options
}

// SharedClient is what a Batch asks of the rueidis client its rounds go through: the command
// builder and one pipeline (rueidis.Client has both, as does redisconn.Shared's client).
type SharedClient interface {
	B() rueidis.Builder
	DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult
}

// Decision is the outcome of one acquire.
type Decision struct {
	Allowed bool
	// Count is what the limiter saw: in-flight after the call (concurrency), the window's
	// count (windows), or whole tokens remaining (token bucket).
	Count      int64
	TTL        time.Duration // fixed window: time left in the window
	RetryAfter time.Duration // token bucket: when a rejected request could pass
	Retries    int           // watch: aborted transactions before this decision
	// AdmitAt is when an admitted request may go, as the limiter answered it (a schedule,
	// --script-admit-at); zero when it goes at once.
	AdmitAt time.Time
	// Member is the sorted-set member added for this request (concurrency, sliding window);
	// Release removes it.
	Member string
	// Sent and Replied, when not zero, are instants the limiter measured itself around its
	// decision (an HTTP endpoint: before the request's first byte left, after the response's
	// first byte arrived), tighter than the caller's own around the call, which they replace.
	Sent, Replied time.Time
	// Status is an HTTP endpoint's response status, set on an error too when there was a
	// response; 0 for a Redis limiter.
	Status int
	// Retried: the request was sent again after the connection it went out on was closed under
	// it, so the limiter may have decided (and counted) it twice.
	Retried bool
	// acquiredAt is the now of the acquire, for a release template that passes the time.
	acquiredAt time.Time
	// reply is a contracted acquire's reply as text, for a release template's {reply} (the slot
	// a Laravel-style limiter took).
	reply string
}

// ReplyText is a contracted acquire's reply as text ("" for the shipped strategies).
func (d Decision) ReplyText() string { return d.reply }

// Limiter makes decisions for one algorithm and strategy. It is safe for concurrent use.
type Limiter interface {
	// Acquire decides one request on key at time now.
	Acquire(ctx context.Context, key string, now time.Time) (Decision, error)
	// Release ends an admitted request (concurrency only; a no-op for the others).
	Release(ctx context.Context, key string, d Decision) error
}

// Client is the slice of go-redis the limiters use; a single node and a cluster client both fit.
type Client interface {
	redis.Cmdable
	Watch(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error
	Do(ctx context.Context, args ...any) *redis.Cmd // a custom contract's release command
	// Process sends a command the client-side steps built (so each can be timed and its reply
	// recorded on its own).
	Process(ctx context.Context, cmd redis.Cmder) error
}

// New builds a limiter of kind k running strategy s.
func New(k Kind, s Strategy, rdb Client, cfg Config) (Limiter, error) {
	if _, err := ParseKind(string(k)); err != nil {
		return nil, err
	}
	if err := k.Describe().validate(cfg); err != nil {
		return nil, err
	}
	if !Supports(k, s) {
		return nil, fmt.Errorf("strategy %s applies only to %s", s, SupportedBy(s))
	}
	if s == Custom && strings.TrimSpace(cfg.CustomSource) == "" {
		return nil, fmt.Errorf("strategy custom needs a script (--script FILE.lua)")
	}
	if cfg.Cost == 0 {
		cfg.Cost = 1
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 1000
	}
	base := base{kind: k.Describe(), cfg: cfg, rdb: rdb, ids: newIDSource()}
	if cfg.Nodes != nil && cfg.Shared != nil {
		base.slots = &topology{shared: cfg.Shared, timeout: cfg.SharedTimeout}
	}
	switch s {
	case Custom:
		return newContracted(base)
	case Lua, Eval, Function, LuaTSMember:
		return newScripted(base, s), nil
	case Naive:
		return &naive{base}, nil
	case Multi:
		return &multi{base}, nil
	case Watch:
		return &watch{base}, nil
	}
	return nil, fmt.Errorf("unknown strategy %q", s)
}

// base carries what every strategy shares.
type base struct {
	kind *Description
	cfg  Config
	rdb  Client
	ids  *idSource
	// slots is the cluster's slot map the strategy's batches share (Config.Nodes), or nil.
	slots *topology
}

// Release removes the request's member from the concurrency set: one ZREM is already atomic,
// so every strategy releases the same way.
func (b base) Release(ctx context.Context, key string, d Decision) error {
	if !b.kind.Releases || !d.Allowed || d.Member == "" {
		return nil
	}
	return b.rdb.ZRem(ctx, key, d.Member).Err()
}

// idSource makes unique sorted-set members cheaply: a random per-process prefix and a counter.
type idSource struct {
	prefix string
	next   atomic.Uint64
}

func newIDSource() *idSource {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return &idSource{prefix: hex.EncodeToString(b[:]) + "-"}
}

func (s *idSource) id() string {
	return s.prefix + strconv.FormatUint(s.next.Add(1), 10)
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// reboxed is n as an argument, the one in old[i] when it holds n already: a limit, a window or
// the millisecond of a round's calls repeat call after call in a batch's reused lists, and
// boxing an integer above 255 again would allocate on every decision.
func reboxed(old []any, i int, n int64) any {
	if i < len(old) {
		if v, ok := old[i].(int64); ok && v == n {
			return old[i]
		}
	}
	return n
}

// reboxedText is s as an argument, the one in old[i] when it holds s already (a rate's text,
// the same call after call).
func reboxedText(old []any, i int, s string) any {
	if i < len(old) {
		if v, ok := old[i].(string); ok && v == s {
			return old[i]
		}
	}
	return s
}
