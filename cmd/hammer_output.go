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
	// Clock is whose time the strategy's script used: client (passed in ARGV), server (TIME) or
	// virtual (TIME, answered by the hammer with each call's own time: TimeAnswered).
	Clock        string `json:"clock"`
	TimeAnswered bool   `json:"time_answered"`
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
			Clock: string(hammer.ClockOf(res.Options, limiter.Strategy(st.Name))), TimeAnswered: hammer.TimeAnswered(res.Options, limiter.Strategy(st.Name)),
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
	cs := f.IO.ErrColorScheme()
	if format == "table" {
		cs = f.IO.ColorScheme()
	}
	for _, n := range hammer.ClockNotes(res.Options) {
		fmt.Fprintln(words, fitLine(n, width))
	}
	for _, v := range paintedVerdicts(s, cs) {
		fmt.Fprintln(words, fitLine(v, width))
	}
	if format == "json" {
		return nil // the assertions are in the JSON
	}
	for _, a := range res.Assertions {
		verdict := cs.Good("PASS")
		if !a.Passed {
			verdict = cs.Bad("FAIL")
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

// progressWidth bounds a progress line, as CI logs and 100-column terminals show them whole.
const progressWidth = 100

// progressLine is one tick for a log: "[3s/10s] naive 17.2k/s peak 64/20 (+44) p99 13.5ms |
// lua 44.3k/s peak 20/20 p99 6.87ms", errors only when there are some. Strategies that do not
// fit in progressWidth go on indented lines below (only the first starts with "[").
func progressLine(s bench.Snapshot) string {
	elapsed := s.Elapsed.Round(time.Second)
	head := fmt.Sprintf("[%s/%s]", elapsed, s.Total)
	if s.Total <= 0 {
		head = fmt.Sprintf("[%s %3.0f%%]", elapsed, s.Progress*100)
	}
	if s.Paused {
		head += " paused"
	}
	indent := strings.Repeat(" ", len(head))
	var lines []string
	line := head
	for i, st := range s.Strategies {
		part := fmt.Sprintf("%s %s/s peak %s/%s", st.Name, human.Compact(st.Throughput), progressCount(st.Peak), progressCount(s.Limit))
		if st.Overshoot > 0 {
			part += fmt.Sprintf(" (+%s)", progressCount(st.Overshoot))
		}
		if st.Errors > 0 {
			part += fmt.Sprintf(" %s %s", progressCount(st.Errors), human.Plural(st.Errors, "error", "errors"))
		}
		part += " p99 " + human.Latency(st.Latency.P99)
		sep := " | "
		if i == 0 {
			sep = " "
		}
		if i > 0 && len(line)+len(sep)+len(part) > progressWidth {
			lines, line, sep = append(lines, line), indent, " "
		}
		line += sep + part
	}
	return strings.Join(append(lines, line), "\n")
}

// progressCount is a count in a progress line: whole up to 99,999, then compact (1.2M).
func progressCount(n int64) string {
	if n < 100_000 {
		return strconv.FormatInt(n, 10)
	}
	return human.Compact(float64(n))
}
