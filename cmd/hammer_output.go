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
	"github.com/limitctl/limitctl/internal/limiter"
)

type hammerJSON struct {
	SchemaVersion int                     `json:"schema_version"`
	RunID         string                  `json:"run_id"`
	Target        bench.Target            `json:"target"`
	Limiter       string                  `json:"limiter"`
	Limit         int64                   `json:"limit"`
	Workers       int                     `json:"workers"`
	Conns         int                     `json:"conns"`               // 0: one connection per worker
	Processes     int                     `json:"processes,omitempty"` // hammer report: the processes merged
	DurationS     float64                 `json:"duration_s"`
	Interrupted   bool                    `json:"interrupted"`
	Profile       string                  `json:"profile"`
	SkewMs        float64                 `json:"skew_ms"`
	Strategies    []strategyJSON          `json:"strategies"`
	Assertions    []bench.AssertionResult `json:"assertions"`
	Passed        bool                    `json:"passed"`
	Failures      []string                `json:"failures"`
	KeysDeleted   int64                   `json:"keys_deleted"`
	CleanupErrors []string                `json:"cleanup_errors"`
}

type strategyJSON struct {
	Name              string              `json:"name"`
	Attempts          int64               `json:"attempts"`
	Admitted          int64               `json:"admitted"`
	Rejected          int64               `json:"rejected"`
	Errors            int64               `json:"errors"`
	ErrorsByKind      map[string]int64    `json:"errors_by_kind"`
	Retries           int64               `json:"retries"`
	Peak              int64               `json:"peak"`
	Overshoot         int64               `json:"overshoot"`
	OvershootEvents   int64               `json:"overshoot_events"`
	ThroughputPerS    float64             `json:"throughput_per_s"`
	LatencyMs         latencyJSON         `json:"latency_ms"`
	ServerUsecPerCall *float64            `json:"server_usec_per_call"`
	FailOpenAdmits    int64               `json:"fail_open_admits"`
	FailClosedRejects int64               `json:"fail_closed_rejects"`
	ReleaseErrors     int64               `json:"release_errors"`
	Contended         bool                `json:"contended"`
	ErrorSamples      []bench.ErrorSample `json:"error_samples"`
	Unjudged          int64               `json:"unjudged"`
	// FalseRejects counts refusals proven wrong; null when refusals were not judged (a run id:
	// other processes may share the keys). FirstFalseReject is the evidence for the first.
	FalseRejects     *int64             `json:"false_rejects"`
	FirstFalseReject *bench.FalseReject `json:"first_false_reject"`
	// Verdict is the strategy's verdict word (bench.Verdict*), as the verdict lines say it.
	Verdict string `json:"verdict"`
	// Clock is whose time the strategy's script used: client (passed in ARGV) or server (TIME).
	Clock string `json:"clock"`
	// Contract is how the custom script was called and its reply read (custom only).
	Contract *contractJSON `json:"contract,omitempty"`
}

type contractJSON struct {
	Keys    string `json:"keys"`
	Args    string `json:"args"`
	Allowed string `json:"allowed"`
	Release string `json:"release,omitempty"` // concurrency only
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
		Workers: s.Workers, Conns: s.Conns, Processes: s.Processes, DurationS: math.Round(s.Duration.Seconds()*1000) / 1000, Interrupted: s.Interrupted,
		Strategies: []strategyJSON{}, Assertions: results, Passed: passed, Failures: res.Failures,
		Profile: res.Options.Profile, SkewMs: ms3(res.Options.Skew),
	}
	if out.Profile == "" {
		out.Profile = bench.ProfileSteady
	}
	if out.Failures == nil {
		out.Failures = []string{}
	}
	out.KeysDeleted, out.CleanupErrors = res.KeysDeleted, res.CleanupWarnings
	if out.CleanupErrors == nil {
		out.CleanupErrors = []string{}
	}
	if out.Assertions == nil {
		out.Assertions = []bench.AssertionResult{}
	}
	for _, st := range s.Strategies {
		sj := strategyJSON{
			Name: st.Name, Attempts: st.Attempts, Admitted: st.Admitted, Rejected: st.Rejected, Errors: st.Errors,
			ErrorsByKind: st.ErrorsByKind, Retries: st.Retries, Peak: st.Peak, Overshoot: st.Overshoot,
			OvershootEvents: st.OvershootEvent, ThroughputPerS: math.Round(st.AvgThroughput*10) / 10,
			LatencyMs: latencyJSON{
				P50: ms3(st.Latency.P50), P90: ms3(st.Latency.P90), P99: ms3(st.Latency.P99),
				P999: ms3(st.Latency.P999), Max: ms3(st.Latency.Max),
			},
			ServerUsecPerCall: st.ServerUsecPerCall, FailOpenAdmits: st.FailOpenAdmits, FailClosedRejects: st.FailClosedRejects,
			ReleaseErrors: st.ReleaseErrors, Contended: st.Contended, ErrorSamples: st.ErrorSamples, Unjudged: st.Unjudged,
			Clock:            string(hammer.ClockOf(res.Options, limiter.Strategy(st.Name))),
			FirstFalseReject: st.FirstFalseReject,
			Verdict:          st.Judge(s.Limiter, s.Limit, s.Duration).Word,
		}
		if !st.NoRefusalJudged {
			sj.FalseRejects = &st.FalseRejects
		}
		if sj.ErrorSamples == nil {
			sj.ErrorSamples = []bench.ErrorSample{}
		}
		if c := res.Options.Contract; c != nil && st.Name == string(limiter.Custom) {
			sj.Contract = &contractJSON{Keys: c.Spec.Keys, Args: c.Spec.Args, Allowed: c.Spec.Allowed}
			if res.Options.Limiter == limiter.Concurrency {
				sj.Contract.Release = c.Spec.Release
			}
		}
		out.Strategies = append(out.Strategies, sj)
	}
	return out
}

// writeHammerSummary prints the final summary. On a terminal (-o table): the strategies
// table fitted to its width, the run's shape, one verdict line per strategy, the assertions.
// Otherwise stdout holds only the data (tsv or JSON) and the verdicts and assertions go to
// stderr, so a CI log still has a line a person reads at a glance. The error samples go to
// stderr in every format.
func writeHammerSummary(f *Factory, format string, res hammer.Result) error {
	writeErrorSamples(f.IO.ErrOut, res.Summary)
	s := res.Summary
	doc := toHammerJSON(res)
	width := f.IO.TerminalWidth()
	if err := printReport(f.IO.Out, width, format, report{table: hammerTable(doc.Strategies), json: doc}); err != nil {
		return err
	}
	words := f.IO.ErrOut
	if format == "table" {
		words = f.IO.Out
		conns := ""
		if s.Conns > 0 {
			conns = fmt.Sprintf(" on %d pipelined connections", s.Conns)
		}
		if s.Processes > 0 {
			conns += fmt.Sprintf(", %d processes merged", s.Processes)
		}
		fmt.Fprintf(words, "\n%s\n", fitLine(fmt.Sprintf("%s limiter, limit %d, %d workers per strategy%s, %s%s", s.Limiter, s.Limit, s.Workers, conns,
			s.Duration.Round(time.Millisecond), map[bool]string{true: " (interrupted)", false: ""}[s.Interrupted]), width))
		if res.KeysNotDeleted > 0 {
			fmt.Fprintf(words, "%s\n", fitLine(fmt.Sprintf("clean-up: %d of the run's keys could not be deleted (see the warnings above)", res.KeysNotDeleted), width))
		}
	} else {
		width = 0 // stderr: whole lines in a log; cut only to a $COLUMNS given for a terminal
		if f.IO.StderrTTY {
			width = f.IO.Columns
		}
	}
	for _, v := range verdicts(s) {
		fmt.Fprintln(words, fitLine(v, width))
	}
	if format == "json" {
		return nil // the assertions are in the JSON
	}
	for _, a := range res.Assertions {
		verdict := "PASS"
		if !a.Passed {
			verdict = "FAIL"
		}
		fmt.Fprintf(words, "%s  %s  (%s)\n", verdict, a.Expr, hammer.AssertionDetail(a))
	}
	return nil
}

// writeErrorSamples prints, per strategy that saw errors, the first distinct messages with
// their counts: what failed, not only how often.
func writeErrorSamples(w io.Writer, s bench.Summary) {
	for _, st := range s.Strategies {
		if len(st.ErrorSamples) == 0 {
			continue
		}
		parts := make([]string, len(st.ErrorSamples))
		for i, e := range st.ErrorSamples {
			parts[i] = fmt.Sprintf("%q x%d", e.Message, e.Count)
		}
		fmt.Fprintf(w, "%s: errors: %s\n", st.Name, strings.Join(parts, ", "))
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func fmtMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + "ms"
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
		fmt.Fprintf(&b, "%s%s: %.0f/s peak %d/%d overshoot %d false rejects %d errors %d p99 %s", sep, st.Name, st.Throughput, st.Peak, s.Limit,
			st.Overshoot, st.FalseRejects, st.Errors, fmtMs(st.Latency.P99))
	}
	return b.String()
}
