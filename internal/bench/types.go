package bench

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

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
	FirstFalseReject *FalseReject
	Tightest         *FalseReject
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
}

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
	Strategies  []StrategySnapshot
}
