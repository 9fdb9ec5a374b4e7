package bench

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/limiter"
)

// Snapshot is the engine's state at one tick, a value copy the dashboard renders. The engine
// sends one per tick and drops a tick rather than block a worker.
type Snapshot struct {
	Target   Target
	Limiter  limiter.Kind
	Limit    int64
	Workers  int
	Elapsed  time.Duration
	Total    time.Duration // 0 when the run is bounded by --requests or open-ended
	Progress float64       // 0..1, by time or by requests
	Paused   bool
	Done     bool
	// Extending says why the run loads on past its bound (its evidence is not yet enough for
	// a verdict), "" while it does not.
	Extending string
	// Strategies are in the order given on the command line.
	Strategies []StrategySnapshot
}

// StrategySnapshot is one strategy's numbers at a tick.
type StrategySnapshot struct {
	Name              string
	Attempts          int64
	Admitted          int64
	Rejected          int64
	Errors            int64
	ErrorsByKind      map[string]int64
	Retries           int64
	FailOpenAdmits    int64
	FailClosedRejects int64
	// ReleaseErrors counts releases (ZREM) that failed: not decisions, so not in Errors.
	ReleaseErrors int64
	// Statuses count an endpoint's answers by status code, admits, refusals and errors alike
	// (StrategyRun.Endpoint; 0 for a status out of 100-599); nil for a Redis strategy.
	Statuses map[int]int64
	// Abandoned counts admitted requests never released on purpose, as a crashed client's
	// (Config.Abandon): a correct limiter reclaims them after stale-after.
	Abandoned int64
	// ErrorSamples are the first distinct error messages (decisions and releases) with their
	// counts, at most MaxErrorSamples of them, so a summary says what failed, not only how often.
	ErrorSamples []ErrorSample
	// Findings are what the strategy's evidence found (its peak and overshoot, power, windows
	// proven, false rejects).
	fold.Findings
	// Contended is the evidence that the limit was reached at least once: a decision the
	// limiter rejected, or a peak (witness, window count, bucket draw) at the limit. Without it
	// an overshoot of 0 proves nothing.
	Contended bool
	// Throughput is decisions per second over the last tick; AvgThroughput over the whole run.
	Throughput    float64
	AvgThroughput float64
	Latency       Latency
	// Histogram is the latency histogram (µs) of the final snapshot, for merging the runs of
	// several processes; nil on live ticks.
	Histogram *hdrhistogram.Snapshot
	// ServerUsecPerCall is Redis's own time per decision from INFO commandstats; nil when the
	// server does not report it or it cannot be told apart from another strategy's.
	ServerUsecPerCall *float64
	// Leaks are the strategy's keys that the run left without a TTL, or with one far beyond
	// anything a limiter of its kind needs, read on every master after the load (final
	// snapshot only); nil when they were not read, and LeftoversUnread then says why.
	Leaks           *Leaks
	LeftoversUnread string
	// LargestKey is the strategy's largest set, sorted set, list or stream when the run ended
	// (what can hold an entry per request); nil when it left none.
	LargestKey *KeySize
	// Allowances name what widens the evidence's bounds (skew, the server's clock, lateness),
	// for saying why admits went unjudged; empty when nothing does.
	Allowances string
	// Unbounded, of Unjudged, are the admits (and the answers not known to be refusals) whose
	// records bound no time of decision: a start or an end unknown, out of time order (judge
	// reads them from a load tool's records; the engine times every call itself).
	Unbounded int64
}

// Leaks counts what a strategy's keys would leave behind for ever (SPEC section 9): keys without
// a TTL, and keys whose TTL is far beyond anything a limiter of the kind needs (LeakTTL), with
// the first few as samples.
type Leaks struct {
	KeysWithoutTTL int64      `json:"keys_without_ttl"`
	KeysTTLTooLong int64      `json:"keys_ttl_too_long"`
	Samples        []KeyState `json:"samples"`
}

// Total is every leaking key, what an assertion on leaks reads.
func (l Leaks) Total() int64 { return l.KeysWithoutTTL + l.KeysTTLTooLong }

// KeyState is one key as the end-of-run read found it; TTLMs is -1 for none.
type KeyState struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Size  int64  `json:"size"`
	TTLMs int64  `json:"ttl_ms"`
}

// KeySize names a key with its type and size (members, elements, fields or bytes).
type KeySize struct {
	Key  string `json:"key"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// Leftovers are one strategy's keys as the end-of-run read found them.
type Leftovers struct {
	Leaks   Leaks
	Largest *KeySize
}

// MaxLeakSamples bounds the leaking keys a summary names per strategy.
const MaxLeakSamples = 5

// LeakTTL is the longest TTL that is no leak for a limiter whose window (or stale-after) is
// span: max(1 hour, 100 spans). A key kept for a few, or tens of, windows is a limiter doing
// its job; one kept for years is a TTL computed from an absolute time instead of a duration.
func LeakTTL(span time.Duration) time.Duration { return max(time.Hour, 100*span) }

// GrowthFactor is how far above its limit a set or list of the run may end before the summary
// notes that it grows with traffic (largest_key): a note, not a failure.
const GrowthFactor = 10

// ErrorSample is one distinct error message and how often it occurred.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// MaxErrorSamples bounds the distinct messages kept per strategy; MaxErrorMessage trims each.
const (
	MaxErrorSamples = 5
	MaxErrorMessage = 200
)

// Latency holds percentiles of decision latency.
type Latency struct {
	P50, P90, P99, P999, Max time.Duration
}

// Target is what the hammer sends load to.
type Target struct {
	Kind string `json:"kind"` // redis, cluster, redis-server (spawned), memory (in-process)
	Addr string `json:"addr"`
}

// Summary is the result of a whole run.
type Summary struct {
	RunID       string
	Target      Target
	Limiter     limiter.Kind
	Limit       int64
	Workers     int
	Conns       int           // connections each strategy's workers shared, pipelined; 0: one per worker
	Processes   int           // hammer report: how many processes' summaries were merged (0: one run)
	Duration    time.Duration // actual wall time of the load
	Interrupted bool
	// Extended: the run loaded past its bound, for the evidence its verdicts needed (nil: it
	// did not).
	Extended   *Extension
	Strategies []StrategySnapshot
}

// Contend sets Contended: a refusal, or a peak at the limit.
func (v *StrategySnapshot) Contend(limit int64) { v.Contended = v.Rejected > 0 || v.Peak >= limit }
