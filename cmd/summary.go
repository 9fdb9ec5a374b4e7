package cmd

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// hammerTable prints the strategies of a hammer summary. tsv keeps every column in the units
// of the JSON (milliseconds, per second). On a terminal, counts carry thousands separators and
// latencies three significant digits. What the verdict is judged by (strategy, peak, overshoot,
// false rejects, errors) always shows; on a narrow terminal the rest gives way in this order: max, p99.9,
// p90; p50 and p99 merge into p50/p99; the error kinds go (the count stays); whether the limit
// was contended (the verdict line says it too); unjudged admits and release errors (both shown
// only when not all zero); then server time, attempts, rejected, admitted, retries (shown only
// when some strategy retried), the merged latency, decisions/s and overshoot events.
func hammerTable(rows []strategyJSON) tableprint.Table[strategyJSON] {
	type s = strategyJSON
	count := func(get func(s) int64) (func(s) string, func(s) string) {
		return func(x s) string { return human.Count(get(x)) }, func(x s) string { return itoa64(get(x)) }
	}
	latency := func(header string, priority int, get func(latencyJSON) float64) tableprint.Column[s] {
		return tableprint.Column[s]{Header: header, Priority: priority,
			Human:   func(x s) string { return human.Latency(msToDuration(get(x.LatencyMs))) },
			Machine: func(x s) string { return strconv.FormatFloat(get(x.LatencyMs), 'f', 3, 64) + "ms" },
		}
	}
	col := func(header string, priority int, get func(s) int64) tableprint.Column[s] {
		h, m := count(get)
		return tableprint.Column[s]{Header: header, Priority: priority, Human: h, Machine: m}
	}
	attempts := col("attempts", 7, func(x s) int64 { return x.Attempts })
	admitted := col("admitted", 5, func(x s) int64 { return x.Admitted })
	rejected := col("rejected", 6, func(x s) int64 { return x.Rejected })
	retries := col("retries", 4, func(x s) int64 { return x.Retries })
	retries.HideZero = true
	peak := col("peak", 0, func(x s) int64 { return x.Peak })
	overshoot := col("overshoot", 0, func(x s) int64 { return x.Overshoot })
	events := col("events", 1, func(x s) int64 { return x.OvershootEvents })
	falseRejects := tableprint.Column[s]{Header: "false rej", Field: "false_rejects", Priority: 0,
		Human:   func(x s) string { return optCount(x.FalseRejects, human.Count, "-") },
		Machine: func(x s) string { return optCount(x.FalseRejects, itoa64, "n/a") }}
	unjudged := col("unjudged", 10, func(x s) int64 { return x.Unjudged })
	releaseErrors := col("release errors", 9, func(x s) int64 { return x.ReleaseErrors })
	unjudged.HideZero, releaseErrors.HideZero = true, true
	errorCount := col("errors", 0, func(x s) int64 { return x.Errors })
	errorCount.Field, errorCount.Of = "errors_count", []string{"errors"}
	return tableprint.Table[strategyJSON]{Rows: rows, Columns: []tableprint.Column[s]{
		{Header: "strategy", Human: func(x s) string { return x.Name }},
		attempts, admitted, rejected,
		{Header: "errors", Priority: 12,
			Human: func(x s) string {
				if x.Errors == 0 {
					return "0"
				}
				return human.Count(x.Errors) + " (" + strings.Join(human.ErrorKinds(x.ErrorsByKind), ", ") + ")"
			},
			Machine: func(x s) string { return itoa64(x.Errors) }},
		errorCount,
		retries, peak, overshoot, events, falseRejects,
		{Header: "decisions/s", Field: "throughput_per_s", Priority: 2,
			Human:   func(x s) string { return human.Count(int64(math.Round(x.ThroughputPerS))) },
			Machine: func(x s) string { return strconv.FormatFloat(math.Round(x.ThroughputPerS), 'f', 0, 64) }},
		latency("p50", 13, func(l latencyJSON) float64 { return l.P50 }),
		latency("p90", 14, func(l latencyJSON) float64 { return l.P90 }),
		latency("p99", 13, func(l latencyJSON) float64 { return l.P99 }),
		latency("p99.9", 15, func(l latencyJSON) float64 { return l.P999 }),
		latency("max", 16, func(l latencyJSON) float64 { return l.Max }),
		{Header: "p50/p99", Of: []string{"p50", "p99"}, Priority: 3, Human: func(x s) string {
			return human.Latency(msToDuration(x.LatencyMs.P50)) + "/" + human.Latency(msToDuration(x.LatencyMs.P99))
		}},
		{Header: "server µs", Field: "server_usec_per_call", Priority: 8,
			Human:   func(x s) string { return usecCell(x.ServerUsecPerCall, "-") },
			Machine: func(x s) string { return usecCell(x.ServerUsecPerCall, "n/a") }},
		{Header: "contended", Priority: 11, Human: func(x s) string { return yesNo(x.Contended) }},
		unjudged, releaseErrors,
	}}
}

// optCount prints a count that may not have been measured.
func optCount(v *int64, format func(int64) string, none string) string {
	if v == nil {
		return none
	}
	return format(*v)
}

func msToDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

func usecCell(v *float64, none string) string {
	if v == nil {
		return none
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}

// verdicts are one line per strategy saying in plain words who overshot, by how much, and on
// what evidence (bench.StrategySnapshot.Judge), aligned in columns:
//
//	naive  OVERSHOOT    peak 64 of 20 (+44), 29,022 events in 8.0s
//	lua    exact        peak 20 of 20, 0 events, 0 false rejects
//	watch  no evidence  peak 6 of 20: the limit was never reached, so nothing was tested
//	eval   errors       312 of 10,000 decisions failed (timeout 312); peak 20 of 20
func verdicts(s bench.Summary) []string {
	judged := make([]bench.Verdict, len(s.Strategies))
	nameW, wordW := 0, 0
	for i, st := range s.Strategies {
		judged[i] = st.Judge(s.Limiter, s.Limit, s.Duration)
		nameW, wordW = max(nameW, len(st.Name)), max(wordW, len(judged[i].Word))
	}
	out := make([]string, len(judged))
	for i, v := range judged {
		out[i] = fmt.Sprintf("%-*s  %-*s  %s", nameW, s.Strategies[i].Name, wordW, v.Word, v.Text)
	}
	return out
}

// fitLine cuts a line to the terminal's width (0: no bound) so that it never wraps.
func fitLine(s string, width int) string {
	if width <= 0 || len([]rune(s)) <= width {
		return s
	}
	return string([]rune(s)[:width-1]) + "…"
}
