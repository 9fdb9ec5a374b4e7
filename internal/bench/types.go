package bench

import (
	"cmp"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/bench/overshoot"
	"github.com/limitctl/limitctl/internal/bench/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
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
	// Early counts an endpoint's admits answered sooner after they were sent than the hold it
	// promises (concurrency): it does not hold its slots that long, and they are no evidence.
	Early int64
	// Abandoned counts admitted requests never released on purpose, as a crashed client's
	// (Config.Abandon): a correct limiter reclaims them after stale-after.
	Abandoned int64
	// ErrorSamples are the first distinct error messages (decisions and releases) with their
	// counts, at most MaxErrorSamples of them, so a summary says what failed, not only how often.
	ErrorSamples []ErrorSample
	// Contended is the evidence that the limit was reached at least once: a decision the
	// limiter rejected, or a peak (witness, window count, bucket draw) at the limit. Without it
	// an overshoot of 0 proves nothing.
	Contended bool
	// Unjudged counts admits left out of the evidence: those that arrived later than the horizon,
	// after their window was judged, and, for the window limiters, those whose reply came a window
	// or more after their own now (the scripts are exact only within one window of their now).
	Unjudged int64
	// Current is in flight now (concurrency) or the newest window's count (windows, bucket).
	Current int64
	// Windows are what the evidence proved of one window, at the time each count was about, for
	// evidence judged long after (calls judged over their intervals: an HTTP target's, a
	// TIME-reading script's, the records judge reads); nil for the others, and before the final
	// snapshot. The report draws them where the windows were, not where they were judged.
	Windows []WindowCount
	// TickPeak is the highest Current since the previous snapshot (0 when the engine does not
	// track it): a short overshoot between two ticks still reaches the dashboard's chart.
	TickPeak       int64
	Peak           int64
	Overshoot      int64
	OvershootEvent int64
	// FirstOvershoot is how the first overshoot happened: the requests behind it with their
	// commands and replies (nil when there was none, or none could be shown). Read-only: the
	// snapshots of one run share it.
	FirstOvershoot *trace.Overshoot
	// FalseRejects counts refused decisions the evidence proves wrong: at every instant the
	// limiter can have decided, it certainly had room (SPEC section 8). FirstFalseReject is the
	// evidence for the earliest, Tightest the one with the least room left (its numbers hold
	// for all of them); both nil without any.
	FalseRejects     int64
	FirstFalseReject *refusal.FalseReject
	Tightest         *refusal.FalseReject
	// RefusalsUnjudged says why refusals were not judged (other processes may share the keys),
	// or why those from some moment on were not (a master was replaced); empty when all were.
	// NoRefusalJudged: none was, so FalseRejects is no evidence of anything.
	RefusalsUnjudged string
	NoRefusalJudged  bool
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
	// CaughtFrom is the evidence's power (overshoot.Evidence.CaughtFrom), in the final snapshot:
	// the smallest overshoot per window (for concurrency, held over the limit at once) that this
	// run's evidence would have proven; 0 when none up to PowerSearched(limit) would have been.
	// Nil when it was not measured (live ticks).
	CaughtFrom *int64
	// CaughtFromFirstHit, for a fixed window judged with its alignment unknown, is the power
	// windows anchored at the calls that opened them would have had (--window-start first-hit),
	// where it is better than CaughtFrom; nil otherwise.
	CaughtFromFirstHit *int64
	// Unbounded, of Unjudged, are the admits (and the answers not known to be refusals) whose
	// records bound no time of decision: a start or an end unknown, out of time order (judge
	// reads them from a load tool's records; the engine times every call itself).
	Unbounded int64
}

// PowerSearched is how large an overshoot per window the power is searched up to: twice the
// limit (and at least 2), past the point where a verdict of exact says nothing, but no more than
// maxPowerSearched, so re-judging a run with a limit in the thousands stays quick (each phantom
// is judged as an admit).
func PowerSearched(limit int64) int64 { return min(maxPowerSearched, max(2, 2*limit)) }

// maxPowerSearched bounds the search: a run whose evidence would not have proven 4096 admits
// over the limit per window says so ("not judged"), whatever its limit.
const maxPowerSearched = 4096

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

// WindowCount is the most admits one window certainly held among the windows starting in a short
// span of time from At (since the run began).
type WindowCount struct {
	At    time.Duration
	Count int64
}

// WindowsOf merges the timelines of several keys' evidence (overshoot.Evidence.Timeline), each
// bucket's highest count kept, in time order; nil when none keeps one.
func WindowsOf(evidence []*overshoot.Evidence) []WindowCount {
	byAt := map[int64]int64{}
	for _, ev := range evidence {
		for _, c := range ev.Timeline() {
			byAt[c.AtUs] = max(byAt[c.AtUs], c.N)
		}
	}
	if len(byAt) == 0 {
		return nil
	}
	out := make([]WindowCount, 0, len(byAt))
	for at, n := range byAt {
		out = append(out, WindowCount{At: time.Duration(at) * time.Microsecond, Count: n})
	}
	slices.SortFunc(out, func(a, b WindowCount) int { return cmp.Compare(a.At, b.At) })
	return out
}
