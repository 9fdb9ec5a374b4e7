package limiter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/kind"
	"github.com/limitctl/limitctl/internal/trace"
	"github.com/limitctl/limitctl/scripts"
)

// Kind is a rate-limiting algorithm, by its --limiter name. Everything else about it is its
// Description.
type Kind string

// The limiters.
const (
	Concurrency   Kind = "concurrency"
	FixedWindow   Kind = "fixed-window"
	SlidingWindow Kind = "sliding-window"
	TokenBucket   Kind = "token-bucket"
)

// Default is the kind a run limits when none is named (--limiter's default).
const Default = Concurrency

// kinds is the registry, in display order: each kind declares itself once, in its own file
// (kind_<name>.go), and every consumer (the strategies here, the hammer's evidence and load,
// the dashboard, the report, the help texts) ranges over it or asks Describe.
var kinds = []*Description{&concurrency, &fixedWindow, &slidingWindow, &tokenBucket, &slidingWindowCounter}

// Description is one limiter kind, declared once: what it limits, its shipped script and the
// contract that script is called by, the strategies that apply, how the hammer proves
// overshoot, the keys a decision writes, how inspect and the dashboards name it, and the
// decision itself for every way of running it.
type Description struct {
	Kind Kind
	// Limits says what --limit counts, for help and messages: "in-flight requests".
	Limits string
	// MinLimit is the smallest --limit the kind takes (a bucket of no tokens admits nothing).
	MinLimit int64
	// Script names the shipped script (package scripts); it also ships as a Redis Function of
	// the limitctl library, registered under scripts.Script.FunctionName.
	Script string
	// Contract is how the shipped script is called, and so the contract a custom script is held
	// to unless the user describes its own (--script-keys, --script-args, --script-allowed).
	Contract contract.Spec
	// Strategies are the strategies that apply, in display order.
	Strategies []Strategy
	// Model is the kind's evidence (internal/evidence/kind/<name>): its checkers of overshoot on
	// the stamps and over intervals, its refusal rule, its power and how it is told.
	Model kind.Model
	// Releases: an admitted request holds its slot until its release (ZREM) frees it; the other
	// kinds forget admits by time. Only they take --script-release, --stale-after and --hold as
	// a hold time (for the others --hold is a think time after each admit).
	Releases bool
	// DefaultHold is the --hold when none is given: long enough that 64 workers contend a limit
	// of 20 when requests hold slots; 0 for the others, where a pause after each admit would
	// only slow the load (at 2ms a fixed-window run made about 40% of its decisions/s at 0).
	DefaultHold time.Duration
	// WeighsFraction: the kind weighs what it counted by how far into its window a decision is
	// (the two-counter estimate), so its evidence allows the coarsest now a script may take that
	// fraction from (contract.FractionQuantum), not the finest it is given.
	WeighsFraction bool
	// Bursty: the hammer's default load has idle spells longer than a window between bursts,
	// which steady load lacks to catch a refill that is not capped or a key that outlives its
	// window. Steady load shows a concurrency limiter's bugs and keeps throughput numbers whole.
	Bursty bool
	// Skew is the hammer's default spread of worker clocks (--skew) for a limit per window, so
	// requests reach Redis out of their now order, as from app servers whose clocks differ: what
	// a log pruned too eagerly, a counter that expires with its window, or a bucket that trusts
	// the latest caller's now (and so refills a gap twice) gets wrong. Every kind gets some.
	Skew func(limit int64, window time.Duration) time.Duration
	// Commands are the commands one decision runs, as INFO commandstats names them (by the
	// client-side strategies, or inside the script), for attributing server time.
	Commands []string
	// Inspect is the kind `limitctl inspect` reports this limiter's keys as (keys.Kind).
	Inspect string
	// CountLabel names what the dashboard's live count is: "in-flight", "in window".
	CountLabel string
	// ChartLabel names the count the HTML report charts against the limit: "per-window count".
	ChartLabel string

	// windowKey, when set, names the key a decision at now counts on instead of the limiter
	// key (fixed window: <key>:<window start ms>), and windowSuffix recognises what it appends.
	windowKey    func(key string, now time.Time, window time.Duration) string
	windowSuffix func(suffix string) bool
	// member: the shipped script and the sorted-set steps take a unique member per request.
	member bool
	// validate checks a Config for this kind.
	validate func(Config) error
	// step is one client-side decision (naive, multi, watch), split into read, decide, write.
	step func(b base, key string, now time.Time, underWatch bool) step
	// args are the shipped script's KEYS and ARGV for one decision, appended to keys[:0] and
	// argv[:0] (a batch reuses them call after call).
	args func(cfg Config, keys []string, argv []any, key string, now time.Time, member string) ([]string, []any)
	// replyLen is how many integers the shipped script replies ({allowed, count, ...});
	// readReply fills in what those past the count mean (by value: through a pointer the
	// decision and the integers would be allocated on every call).
	replyLen  int
	readReply func(d Decision, vals [maxReplyLen]int64) Decision
}

// Kinds lists every limiter in display order.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, d := range kinds {
		out[i] = d.Kind
	}
	return out
}

// Names are kinds' or strategies' names, for help texts and completions.
func Names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// Describe is k's description; it panics for a kind that is not one of Kinds, which no parsed
// --limiter can be.
func (k Kind) Describe() *Description {
	for _, d := range kinds {
		if d.Kind == k {
			return d
		}
	}
	panic(fmt.Sprintf("limiter: unknown kind %q", k))
}

// Model is k's evidence; nil for a kind that is not one of Kinds (a summary that names none).
func (k Kind) Model() kind.Model {
	for _, d := range kinds {
		if d.Kind == k {
			return d.Model
		}
	}
	return nil
}

// ParseKind accepts a limiter name.
func ParseKind(s string) (Kind, error) {
	for _, d := range kinds {
		if string(d.Kind) == s {
			return d.Kind, nil
		}
	}
	return "", fmt.Errorf("unknown limiter %q (want one of %s)", s, strings.Join(Names(Kinds()), ", "))
}

// Supports reports whether a strategy applies to a limiter: a timestamp member only means
// something where members are request ids.
func Supports(k Kind, s Strategy) bool {
	for _, st := range k.Describe().Strategies {
		if st == s {
			return true
		}
	}
	return false
}

// KindsWhere lists, in display order, the kinds whose description matches.
func KindsWhere(match func(*Description) bool) []Kind {
	var out []Kind
	for _, d := range kinds {
		if match(d) {
			out = append(out, d.Kind)
		}
	}
	return out
}

// SupportedBy names the limiters a strategy applies to, for a usage error.
func SupportedBy(s Strategy) string {
	return Phrase(KindsWhere(func(d *Description) bool { return Supports(d.Kind, s) }))
}

// Phrase names kinds in a sentence: "the concurrency limiter", "the concurrency and
// sliding-window limiters".
func Phrase(ks []Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = string(k)
	}
	switch len(names) {
	case 0:
		return "no limiter"
	case 1:
		return "the " + names[0] + " limiter"
	}
	return "the " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " limiters"
}

// shippedArgs is a shipped script's ARGV as a contract's Args template ("{limit} {window_ms}"),
// from the one declaration of its signature in package scripts.
func shippedArgs(script string) string {
	s, err := scripts.Lookup(script)
	if err != nil {
		panic(err) // a kind names a script that is not shipped
	}
	return "{" + strings.Join(s.Args, "} {") + "}"
}

// DefaultContract is the calling contract of a limiter's shipped script.
func DefaultContract(k Kind) contract.Spec { return k.Describe().Contract }

// ScriptFor returns the shipped script a limiter runs.
func ScriptFor(k Kind) scripts.Script {
	s, err := scripts.Lookup(k.Describe().Script)
	if err != nil {
		panic(err) // a kind names a shipped script; TestEveryKindIsDescribed checks it
	}
	return s
}

// DecisionKey is the key a decision at now counts on: the limiter key itself, or for a kind
// with window keys the counter of now's window.
func (d *Description) DecisionKey(key string, now time.Time, window time.Duration) string {
	if d.windowKey == nil {
		return key
	}
	return d.windowKey(key, now, window)
}

// OwnsSuffix reports whether what follows "<limiter key>:" in a name is one of the keys the
// kind's decisions write beside the limiter key (a fixed window's window start).
func (d *Description) OwnsSuffix(suffix string) bool {
	return d.windowSuffix != nil && d.windowSuffix(suffix)
}

// scriptReply decodes the shipped script's reply into a decision.
func (d *Description) scriptReply(reply any) (Decision, error) {
	var buf [maxReplyLen]int64
	if _, err := int64s(&buf, reply, d.replyLen); err != nil {
		return Decision{}, fmt.Errorf("%s script reply: %w", d.Kind, err)
	}
	return d.fromReply(buf), nil
}

// scriptInts decodes the shipped script's reply, an array of integers as a Batch recorded it
// (scriptReply), into a decision, as scriptReply decodes the same array.
func (d *Description) scriptInts(reply *trace.Reply) (Decision, error) {
	if int(reply.Len) < d.replyLen {
		return Decision{}, fmt.Errorf("%s script reply: %w", d.Kind, shortReply(d.replyLen, int(reply.Len)))
	}
	var buf [maxReplyLen]int64
	for i := range d.replyLen {
		buf[i] = reply.Int(i)
	}
	return d.fromReply(buf), nil
}

// fromReply is the decision the script's reply's first replyLen integers say.
func (d *Description) fromReply(vals [maxReplyLen]int64) Decision {
	dec := Decision{Allowed: vals[0] == 1, Count: vals[1]}
	if d.readReply != nil {
		dec = d.readReply(dec, vals)
	}
	return dec
}

// validLimit is the check every kind makes of its limit.
func validLimit(c Config) error {
	if c.Limit < 0 {
		return fmt.Errorf("limit must be 0 or more, got %d", c.Limit)
	}
	return nil
}

// admitBelow admits the request (adding member) when the counted members are below the limit:
// the decision of every kind that counts members.
func admitBelow(count *redis.IntCmd, limit int64, member string) (Decision, bool, error) {
	n, err := count.Result()
	if err != nil {
		return Decision{}, false, err
	}
	if n >= limit {
		return Decision{Count: n}, false, nil
	}
	return Decision{Allowed: true, Count: n + 1, Member: member}, true, nil
}

// pexpire is PEXPIRE key d, built unsent, as go-redis's PExpire sends it.
func pexpire(ctx context.Context, key string, d time.Duration) *redis.BoolCmd {
	return redis.NewBoolCmd(ctx, "pexpire", key, d.Milliseconds())
}

// fewMilliseconds is the skew of the window and concurrency limiters: up to 5ms, whatever the
// limit.
func fewMilliseconds(int64, time.Duration) time.Duration { return 5 * time.Millisecond }
