package cmd

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/human"
)

type hammerJSON struct {
	SchemaVersion int                     `json:"schema_version"`
	RunID         string                  `json:"run_id"`
	Target        bench.Target            `json:"target"`
	Limiter       string                  `json:"limiter"`
	Limit         int64                   `json:"limit"`
	Workers       int                     `json:"workers"`
	DurationS     float64                 `json:"duration_s"`
	Interrupted   bool                    `json:"interrupted"`
	Strategies    []strategyJSON          `json:"strategies"`
	Assertions    []bench.AssertionResult `json:"assertions"`
	Passed        bool                    `json:"passed"`
}

type strategyJSON struct {
	Name              string           `json:"name"`
	Attempts          int64            `json:"attempts"`
	Admitted          int64            `json:"admitted"`
	Rejected          int64            `json:"rejected"`
	Errors            int64            `json:"errors"`
	ErrorsByKind      map[string]int64 `json:"errors_by_kind"`
	Retries           int64            `json:"retries"`
	Peak              int64            `json:"peak"`
	Overshoot         int64            `json:"overshoot"`
	OvershootEvents   int64            `json:"overshoot_events"`
	ThroughputPerS    float64          `json:"throughput_per_s"`
	LatencyMs         latencyJSON      `json:"latency_ms"`
	ServerUsecPerCall *float64         `json:"server_usec_per_call"`
	FailOpenAdmits    int64            `json:"fail_open_admits"`
	FailClosedRejects int64            `json:"fail_closed_rejects"`
	ReleaseErrors     int64            `json:"release_errors"`
}

type latencyJSON struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

func ms3(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000
}

func toHammerJSON(res hammer.Result) hammerJSON {
	s, results, passed := res.Summary, res.Assertions, res.Passed
	out := hammerJSON{
		SchemaVersion: SchemaVersion, RunID: s.RunID, Target: s.Target, Limiter: string(s.Limiter), Limit: s.Limit,
		Workers: s.Workers, DurationS: math.Round(s.Duration.Seconds()*1000) / 1000, Interrupted: s.Interrupted,
		Strategies: []strategyJSON{}, Assertions: results, Passed: passed,
	}
	if out.Assertions == nil {
		out.Assertions = []bench.AssertionResult{}
	}
	for _, st := range s.Strategies {
		out.Strategies = append(out.Strategies, strategyJSON{
			Name: st.Name, Attempts: st.Attempts, Admitted: st.Admitted, Rejected: st.Rejected, Errors: st.Errors,
			ErrorsByKind: st.ErrorsByKind, Retries: st.Retries, Peak: st.Peak, Overshoot: st.Overshoot,
			OvershootEvents: st.OvershootEvent, ThroughputPerS: math.Round(st.AvgThroughput*10) / 10,
			LatencyMs: latencyJSON{
				P50: ms3(st.Latency.P50), P90: ms3(st.Latency.P90), P99: ms3(st.Latency.P99),
				P999: ms3(st.Latency.P999), Max: ms3(st.Latency.Max),
			},
			ServerUsecPerCall: st.ServerUsecPerCall, FailOpenAdmits: st.FailOpenAdmits, FailClosedRejects: st.FailClosedRejects,
			ReleaseErrors: st.ReleaseErrors,
		})
	}
	return out
}

// writeHammerSummary prints the final summary: JSON, a tsv table (assertions on stderr), or a
// table followed by the assertions and a verdict.
func writeHammerSummary(f *Factory, format string, res hammer.Result) error {
	if format == "json" {
		return writeJSON(f.IO.Out, toHammerJSON(res))
	}
	s, results := res.Summary, res.Assertions
	r := report{header: []string{"strategy", "attempts", "admitted", "rejected", "errors", "retries", "peak", "overshoot",
		"events", "decisions/s", "p50", "p90", "p99", "p99.9", "max", "server usec/call"}}
	if format == "tsv" {
		r.header[9], r.header[15] = "throughput_per_s", "server_usec_per_call"
	}
	for _, st := range s.Strategies {
		errs := strconv.FormatInt(st.Errors, 10)
		if format == "table" && st.Errors > 0 {
			errs += " (" + strings.Join(human.ErrorKinds(st.ErrorsByKind), ", ") + ")"
		}
		r.rows = append(r.rows, []string{
			st.Name, itoa64(st.Attempts), itoa64(st.Admitted), itoa64(st.Rejected), errs, itoa64(st.Retries),
			itoa64(st.Peak), itoa64(st.Overshoot), itoa64(st.OvershootEvent), strconv.FormatFloat(math.Round(st.AvgThroughput), 'f', 0, 64),
			fmtMs(st.Latency.P50), fmtMs(st.Latency.P90), fmtMs(st.Latency.P99), fmtMs(st.Latency.P999), fmtMs(st.Latency.Max), fmtUsec(st.ServerUsecPerCall),
		})
	}
	if err := writeReport(f.IO.Out, format, r); err != nil {
		return err
	}
	assertOut := f.IO.Out
	if format == "tsv" {
		assertOut = f.IO.ErrOut
	}
	if format == "table" {
		fmt.Fprintf(f.IO.Out, "\n%s limiter, limit %d, %d workers per strategy, %s%s\n", s.Limiter, s.Limit, s.Workers,
			s.Duration.Round(time.Millisecond), map[bool]string{true: " (interrupted)", false: ""}[s.Interrupted])
	}
	for _, res := range results {
		verdict := "PASS"
		if !res.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(assertOut, "%s  %s  (actual %s)\n", verdict, res.Expr, hammer.FormatActual(res.Actual))
	}
	return nil
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func fmtMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + "ms"
}

func fmtUsec(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}

// progressLines prints one plain line per second (no ANSI codes) while the run lasts: what CI
// logs show instead of the dashboard. It drains snapshots until the engine closes the channel.
func progressLines(w io.Writer, snapshots <-chan bench.Snapshot) error {
	last := time.Now() // the first line after a second of load, not after the first tick
	for snap := range snapshots {
		if snap.Done || time.Since(last) < time.Second {
			continue
		}
		last = time.Now()
		fmt.Fprintln(w, progressLine(snap))
	}
	return nil
}

func progressLine(s bench.Snapshot) string {
	var b strings.Builder
	elapsed := s.Elapsed.Round(time.Second)
	if s.Total > 0 {
		fmt.Fprintf(&b, "[%s/%s]", elapsed, s.Total)
	} else {
		fmt.Fprintf(&b, "[%s %3.0f%%]", elapsed, s.Progress*100)
	}
	if s.Paused {
		b.WriteString(" paused")
	}
	for i, st := range s.Strategies {
		sep := " "
		if i > 0 {
			sep = " | "
		}
		fmt.Fprintf(&b, "%s%s: %.0f/s peak %d/%d overshoot %d errors %d p99 %s", sep, st.Name, st.Throughput, st.Peak, s.Limit,
			st.Overshoot, st.Errors, fmtMs(st.Latency.P99))
	}
	return b.String()
}
