package hammer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/history"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistrace"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/internal/trace"
)

// A Result is what hammer and hammer report print: its JSON (MarshalJSON), the Table of its
// strategies (table.go) and its lines for a person (VerdictLines, ...), all from the same
// values. JSON durations are numbers with the unit in the name, to the microsecond.

// StrategyResult is one strategy of a run as it is printed: an entry of the JSON's strategies
// and a row of the table.
type StrategyResult struct {
	bench.StrategySnapshot
	Verdict verdict.Verdict
	// Clock is whose time the strategy's script used: client (passed in ARGV), server (TIME) or
	// virtual (TIME, answered by the hammer with each call's own time: TimeAnswered).
	Clock        contract.Clock
	TimeAnswered bool
	// Contract is how the custom script was called and its reply read; nil for the others.
	Contract *contract.Spec
	// HTTP is the endpoint an HTTP target's strategy called (--http); nil for the others.
	HTTP *HTTPTarget
	// Redis is what the HTTP target's application sent to its Redis (--http-redis-trace); nil
	// without a trace.
	Redis *redistrace.Summary
}

// Strategies are the run's strategies in display order, each with its verdict.
func (r Result) Strategies() []StrategyResult {
	out := make([]StrategyResult, len(r.Summary.Strategies))
	for i, st := range r.Summary.Strategies {
		out[i] = StrategyResult{StrategySnapshot: st, Clock: ClockOf(r.Options, limiter.Strategy(st.Name)),
			TimeAnswered: TimeAnswered(r.Options, limiter.Strategy(st.Name))}
		if r.Recorded != nil {
			out[i].Clock, out[i].TimeAnswered = r.Recorded.Clock(st.Name), false
		}
		if i < len(r.Verdicts) {
			out[i].Verdict = r.Verdicts[i]
		}
		if t := r.Options.httpTarget(st.Name); t != nil {
			out[i].HTTP, out[i].Clock = t, contract.ServerClock // the endpoint decides on its own clock
		}
		out[i].Redis = r.RedisTrace[st.Name] // a traced HTTP target's, in a run or its records
		if c := r.Options.Contract; c != nil && st.Name == string(limiter.Custom) {
			spec := c.Spec
			if !r.Options.Limiter.Describe().Releases {
				spec.Release = ""
			}
			if !r.Options.Limiter.Describe().Model.Alignable() {
				spec.WindowStart = "" // only a window whose alignment is the limiter's starts anywhere
			}
			out[i].Contract = &spec
		}
	}
	return out
}

// ThroughputPerS is decisions per second to a tenth, as the JSON and the table show it.
func (s StrategyResult) ThroughputPerS() float64 { return math.Round(s.AvgThroughput*10) / 10 }

// MarshalJSON writes one strategy of the summary.
func (s StrategyResult) MarshalJSON() ([]byte, error) {
	type latency struct {
		P50  ms `json:"p50"`
		P90  ms `json:"p90"`
		P99  ms `json:"p99"`
		P999 ms `json:"p999"`
		Max  ms `json:"max"`
	}
	samples := s.ErrorSamples
	if samples == nil {
		samples = []bench.ErrorSample{}
	}
	type httpTarget struct {
		URL    string `json:"url"`
		Method string `json:"method"`
	}
	var target *httpTarget
	if s.HTTP != nil {
		target = &httpTarget{s.HTTP.URL, strings.ToUpper(cmp.Or(s.HTTP.Method, "GET"))}
	}
	l := s.Latency
	return tableprint.Marshal(struct {
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
		LatencyMs         latency             `json:"latency_ms"`
		ServerUsecPerCall *float64            `json:"server_usec_per_call"`
		FailOpenAdmits    int64               `json:"fail_open_admits"`
		FailClosedRejects int64               `json:"fail_closed_rejects"`
		ReleaseErrors     int64               `json:"release_errors"`
		Abandoned         int64               `json:"abandoned"` // concurrency: admits never released on purpose (--abandon)
		Contended         bool                `json:"contended"`
		ErrorSamples      []bench.ErrorSample `json:"error_samples"`
		Unjudged          int64               `json:"unjudged"`
		FirstOvershoot    *trace.Overshoot    `json:"first_overshoot"`
		// FalseRejects counts refusals proven wrong; null when refusals were not judged (a run
		// id: other processes may share the keys). FirstFalseReject is the evidence for the first.
		FalseRejects     *int64               `json:"false_rejects"`
		FirstFalseReject *refusal.FalseReject `json:"first_false_reject"`
		// RefusalsUnjudged says why refusals (or those from some moment on) were not judged.
		RefusalsUnjudged string `json:"refusals_unjudged,omitempty"`
		Verdict          string `json:"verdict"`
		// VerdictText is the evidence behind the verdict in words, as the verdict line says it.
		VerdictText string `json:"verdict_text"`
		// CaughtFrom is the evidence's power: the smallest overshoot per window (concurrency:
		// held over the limit at once) this run's evidence would have proven; null when none up
		// to twice the limit would have been.
		CaughtFrom *int64 `json:"caught_from"`
		// CaughtFromFirstHit is the power windows anchored at the calls that opened them
		// would have had (--window-start first-hit), where better than caught_from; else null.
		CaughtFromFirstHit *int64 `json:"caught_from_first_hit"`
		// Leaks are the keys left without a TTL or with one far too long; null when the run's
		// keys were not read. LargestKey is the largest set, sorted set, list or stream left.
		Leaks        *bench.Leaks   `json:"leaks"`
		LargestKey   *bench.KeySize `json:"largest_key"`
		Clock        contract.Clock `json:"clock"`
		TimeAnswered bool           `json:"time_answered"`
		Contract     *contract.Spec `json:"contract,omitempty"`
		// Target is the endpoint an HTTP target's strategy called; Statuses count its answers
		// by status code ("0" for one out of 100-599); Early its admits answered sooner than the
		// hold it promises (concurrency). Absent for a Redis strategy.
		Target   *httpTarget   `json:"target,omitempty"`
		Statuses map[int]int64 `json:"statuses,omitempty"`
		Early    *int64        `json:"early,omitempty"`
		// Redis is what an HTTP target's application sent to its Redis, traced
		// (--http-redis-trace): how it decides, its commands, per admit and per refusal.
		Redis *redistrace.Summary `json:"redis,omitempty"`
	}{
		s.Name, s.Attempts, s.Admitted, s.Rejected, s.Errors, s.ErrorsByKind, s.Retries, s.Peak, s.Overshoot, s.OvershootEvent,
		s.ThroughputPerS(), latency{ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.Max)}, s.ServerUsecPerCall,
		s.FailOpenAdmits, s.FailClosedRejects, s.ReleaseErrors, s.Abandoned, s.Contended, samples, s.Unjudged, s.FirstOvershoot,
		s.judgedFalseRejects(), s.FirstFalseReject, s.RefusalsUnjudged, s.Verdict.Word, s.Verdict.Text, s.caughtFrom(), s.CaughtFromFirstHit, s.Leaks, s.LargestKey, s.Clock, s.TimeAnswered, s.Contract,
		target, s.statuses(), s.early(), s.Redis,
	})
}

// statuses are an HTTP target's answers by status code, {} when it got none; nil for a Redis strategy.
func (s StrategyResult) statuses() map[int]int64 {
	if s.HTTP == nil {
		return nil
	}
	if s.Statuses == nil {
		return map[int]int64{}
	}
	return s.Statuses
}

// early is an HTTP concurrency target's admits answered sooner than its hold; nil otherwise.
func (s StrategyResult) early() *int64 {
	if s.HTTP == nil {
		return nil
	}
	return &s.Early
}

// caughtFrom is the power as the JSON gives it: null where none was found (or none measured).
func (s StrategyResult) caughtFrom() *int64 {
	if s.CaughtFrom == nil || *s.CaughtFrom == 0 {
		return nil
	}
	return s.CaughtFrom
}

// judgedFalseRejects is the false-reject count, nil where no refusal was judged: no data is
// not a zero.
func (s StrategyResult) judgedFalseRejects() *int64 {
	if s.NoRefusalJudged {
		return nil
	}
	return &s.FalseRejects
}

// MarshalJSON writes the whole summary of hammer -o json (and hammer report's).
func (r Result) MarshalJSON() ([]byte, error) {
	s := r.Summary
	profile := r.Options.Profile
	if profile == "" {
		profile = limiter.ProfileSteady
	}
	nonNil := func(xs []string) []string {
		if xs == nil {
			return []string{}
		}
		return xs
	}
	assertions := r.Assertions
	if assertions == nil {
		assertions = []verdict.AssertionResult{}
	}
	return tableprint.Marshal(struct {
		RunID         string                    `json:"run_id"`
		Target        bench.Target              `json:"target"`
		Limiter       limiter.Kind              `json:"limiter"`
		Limit         int64                     `json:"limit"`
		Workers       int                       `json:"workers"`
		Conns         int                       `json:"conns"`               // 0: one connection per worker
		Processes     int                       `json:"processes,omitempty"` // hammer report: the processes merged
		DurationS     float64                   `json:"duration_s"`
		Extended      *extensionJSON            `json:"extended"` // null: the run stopped at its bound
		Interrupted   bool                      `json:"interrupted"`
		Profile       string                    `json:"profile"`
		SkewMs        ms                        `json:"skew_ms"`
		Strategies    []StrategyResult          `json:"strategies"`
		Assertions    []verdict.AssertionResult `json:"assertions"`
		Passed        bool                      `json:"passed"`
		Failures      []string                  `json:"failures"`
		KeysDeleted   int64                     `json:"keys_deleted"`
		CleanupErrors []string                  `json:"cleanup_errors"`
		// Records are the files judge read (limitctl judge), absent for a run.
		Records []history.FileJSON `json:"records,omitempty"`
	}{
		s.RunID, s.Target, s.Limiter, s.Limit, s.Workers, s.Conns, s.Processes, math.Round(s.Duration.Seconds()*1000) / 1000,
		newExtensionJSON(s.Extended), s.Interrupted, profile, ms(r.Options.Skew), r.Strategies(), assertions, r.Passed(), nonNil(r.Failures),
		r.KeysDeleted, nonNil(r.CleanupWarnings), r.recordedFiles(),
	})
}

// extensionJSON is how far a run loaded past its bound and why: "to" as a person reads it
// ("12.4s"), "to_s" in seconds, "requests" each strategy's bound in all for a run of
// --requests, and "capped" when it reached its cap with a strategy still unjudged.
type extensionJSON struct {
	To       string  `json:"to"`
	ToS      float64 `json:"to_s"`
	Requests int64   `json:"requests,omitempty"`
	Why      string  `json:"why"`
	Capped   bool    `json:"capped"`
}

func newExtensionJSON(x *bench.Extension) *extensionJSON {
	if x == nil {
		return nil
	}
	return &extensionJSON{To: human.Elapsed(x.To), ToS: math.Round(x.To.Seconds()*1000) / 1000, Requests: x.Requests,
		Why: x.Why, Capped: x.Capped}
}

// ExtensionLine says that the run loaded past its bound, how far and why; "" when it did not.
func (r Result) ExtensionLine() string {
	x := r.Summary.Extended
	if x == nil {
		return ""
	}
	to := human.Elapsed(x.To)
	if x.Requests > 0 {
		to = human.Count(x.Requests) + " decisions a strategy"
	}
	line := fmt.Sprintf("loaded on to %s: %s", to, x.Why)
	if x.Capped {
		line += "; still not judged at the cap (--max-duration, --max-requests): a load of this shape that long cannot judge it"
	}
	return line
}

// recordedFiles are the files judge read, nil for a run.
func (r Result) recordedFiles() []history.FileJSON {
	if r.Recorded == nil {
		return nil
	}
	return r.Recorded.JSON()
}

// ms is a duration JSON writes in milliseconds with three decimals (the microsecond).
type ms time.Duration

// Millis is d in milliseconds to the microsecond, as the JSON and tsv give latencies.
func Millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000
}

func (d ms) MarshalJSON() ([]byte, error) { return json.Marshal(Millis(time.Duration(d))) }

// VerdictLines are one line per strategy saying in plain words who overshot, by how much, and
// on what evidence (its Judgement's verdict), aligned in columns:
//
//	naive  OVERSHOOT    peak 64 of 20 (+44), 29,022 events in 8.0s
//	lua    exact        peak 20 of 20, 0 events, 0 false rejects
//	watch  no evidence  peak 6 of 20: the limit was never reached, so nothing was tested
//	eval   errors       312 of 10,000 decisions failed (timeout 312); peak 20 of 20
//
// paint, when set, colours each verdict word; the columns stay aligned. A line wider than
// width (0: no bound) wraps at its spaces, continuing under the verdict's text.
func (r Result) VerdictLines(paint func(verdict.Verdict) string, width int) []string {
	nameW, wordW := 0, 0
	for i, v := range r.Verdicts {
		nameW, wordW = max(nameW, len(r.Summary.Strategies[i].Name)), max(wordW, len(v.Badge()))
	}
	var out []string
	for i, v := range r.Verdicts {
		word := v.Badge()
		if paint != nil {
			word = paint(v)
		}
		head := fmt.Sprintf("%-*s  %s%s  ", nameW, r.Summary.Strategies[i].Name, word, strings.Repeat(" ", wordW-len(v.Badge())))
		out = append(out, human.Hang(head+v.Text, width, nameW+2+wordW+2)...)
	}
	return out
}

// ShapeLines say what ran and what the clean-up left, under the table on a terminal.
func (r Result) ShapeLines() []string {
	s := r.Summary
	conns := ""
	if s.Conns > 0 {
		conns = fmt.Sprintf(" on %d pipelined connections", s.Conns)
	}
	if s.Processes > 0 {
		conns += fmt.Sprintf(", %d processes merged", s.Processes)
	}
	interrupted := ""
	if s.Interrupted {
		interrupted = " (interrupted)"
	}
	if r.Recorded != nil {
		var records int64
		for _, f := range r.Recorded.Files {
			records += f.Stats.Records
		}
		head := fmt.Sprintf("%s limiter, limit %d, judged from %s %s over %s%s", s.Limiter, s.Limit, human.Count(records),
			human.Plural(records, "record", "records"), human.Elapsed(s.Duration), interrupted)
		return append([]string{head}, r.Recorded.Lines()...)
	}
	lines := []string{fmt.Sprintf("%s limiter, limit %d, %d workers per strategy%s, %s%s", s.Limiter, s.Limit, s.Workers, conns,
		human.Elapsed(s.Duration), interrupted)}
	if line := r.ExtensionLine(); line != "" {
		lines = append(lines, line)
	}
	if r.KeysNotDeleted > 0 {
		lines = append(lines, fmt.Sprintf("clean-up: %d of the run's keys could not be deleted (see the warnings above)", r.KeysNotDeleted))
	}
	return lines
}

// AssertionLines are one line per assertion: "PASS  lua.overshoot==0  (actual 0)". paint, when
// set, colours PASS and FAIL. A line wider than width (0: no bound) wraps at its spaces,
// continuing under the expression.
func (r Result) AssertionLines(paint func(passed bool, word string) string, width int) []string {
	var out []string
	for _, a := range r.Assertions {
		word := "PASS"
		if !a.Passed {
			word = "FAIL"
		}
		if paint != nil {
			word = paint(a.Passed, word)
		}
		out = append(out, human.Hang(fmt.Sprintf("%s  %s  (%s)", word, a.Expr, AssertionDetail(a)), width, len("PASS  "))...)
	}
	return out
}

// LeftoverLines say, per strategy, what the end-of-run read of its keys found beyond the
// verdict: a set, sorted set, list or stream that ended far above what its limit needs (a log
// that grows with traffic: a note, not a failure), and why the keys could not be read.
func (r Result) LeftoverLines() []string {
	var out []string
	for _, st := range r.Summary.Strategies {
		if k := st.LargestKey; k != nil && k.Size > bench.GrowthFactor*r.Summary.Limit {
			out = append(out, fmt.Sprintf("%s: note: %s (%s) ended with %s members, more than %dx its limit of %s: a log that grows with traffic",
				st.Name, k.Key, k.Type, human.Count(k.Size), bench.GrowthFactor, human.Count(r.Summary.Limit)))
		}
		if st.LeftoversUnread != "" {
			out = append(out, fmt.Sprintf("%s: leaks not read: %s", st.Name, st.LeftoversUnread))
		}
	}
	return out
}

// ErrorSampleLines are, per strategy that saw errors, the first distinct messages with their
// counts: what failed, not only how often.
func (r Result) ErrorSampleLines() []string {
	var out []string
	for _, st := range r.Summary.Strategies {
		if len(st.ErrorSamples) == 0 {
			continue
		}
		parts := make([]string, len(st.ErrorSamples))
		for i, e := range st.ErrorSamples {
			parts[i] = fmt.Sprintf("%q x%d", e.Message, e.Count)
		}
		out = append(out, fmt.Sprintf("%s: errors: %s", st.Name, strings.Join(parts, ", ")))
	}
	return out
}
