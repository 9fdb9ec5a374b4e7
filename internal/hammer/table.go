package hammer

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// Table is the run's strategies. tsv keeps every column in the units of the JSON
// (milliseconds, per second). On a terminal, counts carry thousands separators and latencies
// three significant digits. What the verdict is judged by (strategy, peak, overshoot, false
// rejects, errors) always shows; on a narrow terminal the rest gives way in this order:
// abandoned requests (shown only when not all zero; the verdict line counts them too), max,
// p99.9, p90; p50 and p99 merge into p50/p99; the error kinds go (the count stays); whether the
// limit was contended (the verdict line says it too); unjudged admits and release errors (both
// shown only when not all zero, as leaks are, which never give way); then server time, attempts, rejected, admitted, retries (shown
// only when some strategy retried), the merged latency, decisions/s and overshoot events.
func (r Result) Table() tableprint.Tabular {
	type s = StrategyResult
	col := func(header string, priority int, get func(s) int64) tableprint.Column[s] {
		return tableprint.Column[s]{Header: header, Priority: priority,
			Human:   func(x s) string { return human.Count(get(x)) },
			Machine: func(x s) string { return strconv.FormatInt(get(x), 10) }}
	}
	latency := func(header string, priority int, get func(bench.Latency) time.Duration) tableprint.Column[s] {
		return tableprint.Column[s]{Header: header, Priority: priority,
			Human:   func(x s) string { return human.Latency(get(x.Latency)) },
			Machine: func(x s) string { return strconv.FormatFloat(Millis(get(x.Latency)), 'f', 3, 64) + "ms" },
		}
	}
	retries := col("retries", 4, func(x s) int64 { return x.Retries })
	retries.HideZero = true
	unjudged := col("unjudged", 10, func(x s) int64 { return x.Unjudged })
	releaseErrors := col("release errors", 9, func(x s) int64 { return x.ReleaseErrors })
	abandoned := col("abandoned", 17, func(x s) int64 { return x.Abandoned })
	unjudged.HideZero, releaseErrors.HideZero, abandoned.HideZero = true, true, true
	errorCount := col("errors", 0, func(x s) int64 { return x.Errors })
	errorCount.Field, errorCount.Of = "errors_count", []string{"errors"}
	return tableprint.Table[StrategyResult]{Rows: r.Strategies(), Columns: []tableprint.Column[s]{
		{Header: "strategy", Human: func(x s) string { return x.Name }},
		col("attempts", 7, func(x s) int64 { return x.Attempts }),
		col("admitted", 5, func(x s) int64 { return x.Admitted }),
		col("rejected", 6, func(x s) int64 { return x.Rejected }),
		{Header: "errors", Priority: 12,
			Human: func(x s) string {
				if x.Errors == 0 {
					return "0"
				}
				return human.Count(x.Errors) + " (" + strings.Join(human.ErrorKinds(x.ErrorsByKind), ", ") + ")"
			},
			Machine: func(x s) string { return strconv.FormatInt(x.Errors, 10) }},
		errorCount,
		retries,
		col("peak", 0, func(x s) int64 { return x.Peak }),
		col("overshoot", 0, func(x s) int64 { return x.Overshoot }),
		col("events", 1, func(x s) int64 { return x.OvershootEvent }),
		{Header: "false rej", Field: "false_rejects",
			Human:   func(x s) string { return countCell(x.judgedFalseRejects(), human.Count, "-") },
			Machine: func(x s) string { return countCell(x.judgedFalseRejects(), itoa, "n/a") }},
		{Header: "decisions/s", Field: "throughput_per_s", Priority: 2,
			Human:   func(x s) string { return human.Count(int64(math.Round(x.ThroughputPerS()))) },
			Machine: func(x s) string { return strconv.FormatFloat(math.Round(x.ThroughputPerS()), 'f', 0, 64) }},
		latency("p50", 13, func(l bench.Latency) time.Duration { return l.P50 }),
		latency("p90", 14, func(l bench.Latency) time.Duration { return l.P90 }),
		latency("p99", 13, func(l bench.Latency) time.Duration { return l.P99 }),
		latency("p99.9", 15, func(l bench.Latency) time.Duration { return l.P999 }),
		latency("max", 16, func(l bench.Latency) time.Duration { return l.Max }),
		{Header: "p50/p99", Of: []string{"p50", "p99"}, Priority: 3, Human: func(x s) string {
			return human.Latency(x.Latency.P50) + "/" + human.Latency(x.Latency.P99)
		}},
		{Header: "server µs", Field: "server_usec_per_call", Priority: 8,
			Human:   func(x s) string { return human.ServerUsec(x.ServerUsecPerCall, "-") },
			Machine: func(x s) string { return human.ServerUsec(x.ServerUsecPerCall, "n/a") }},
		{Header: "contended", Priority: 11, Human: func(x s) string { return human.YesNo(x.Contended) }},
		unjudged, releaseErrors, abandoned,
		// Last, so a tsv reader's columns keep their places.
		{Header: "leaks", Field: "leaks", HideZero: true,
			Human:   func(x s) string { return countCell(x.leakCount(), human.Count, "-") },
			Machine: func(x s) string { return countCell(x.leakCount(), itoa, "n/a") }},
	}}
}

// leakCount is the strategy's leaking keys, nil when they were not read.
func (s StrategyResult) leakCount() *int64 {
	if s.Leaks == nil {
		return nil
	}
	n := s.Leaks.Total()
	return &n
}

// countCell prints a count that may not have been measured.
func countCell(v *int64, format func(int64) string, none string) string {
	if v == nil {
		return none
	}
	return format(*v)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
