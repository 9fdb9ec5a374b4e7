package cmd

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/tableprint"
	"github.com/limitctl/limitctl/internal/trace"
)

func usec(v float64) *float64 { return &v }

// summaryFixture is an 8-second concurrency run of six strategies: naive and multi overshoot,
// watch retries and never reaches the limit, lua holds exactly, eval fails on 3% of its
// decisions (and 7 releases), custom refuses with room; 12 of multi's admits came too late to
// judge.
func summaryFixture() bench.Summary {
	lat := func(p50, p99 time.Duration) bench.Latency {
		return bench.Latency{P50: p50, P90: (p50 + p99) / 2, P99: p99, P999: p99 * 2, Max: p99 * 3}
	}
	return bench.Summary{RunID: "fixture", Target: bench.Target{Kind: "redis", Addr: "127.0.0.1:6379"}, Limiter: limiter.Concurrency,
		Limit: 20, Workers: 64, Duration: 8 * time.Second, Strategies: []bench.StrategySnapshot{
			{Name: "naive", Attempts: 110_406, Admitted: 49_450, Rejected: 60_956, Contended: true,
				AvgThroughput: 13_800.7, Latency: lat(2179*time.Microsecond, 13903*time.Microsecond), Findings: fold.Findings{Peak: 64, Overshoot: 44, OvershootEvent: 29_022}},
			{Name: "multi", Attempts: 161_620, Admitted: 76_170, Rejected: 85_450, Contended: true,
				AvgThroughput: 20_202.5, Latency: lat(3651*time.Microsecond, 20527*time.Microsecond), Findings: fold.Findings{Unjudged: 12, Peak: 61, Overshoot: 41, OvershootEvent: 3264}},
			{Name: "watch", Attempts: 3600, Admitted: 3600, Retries: 98_940, AvgThroughput: 450,
				Latency: lat(193919*time.Microsecond, 1222655*time.Microsecond), Findings: fold.Findings{Peak: 6}},
			{Name: "lua", Attempts: 342_748, Admitted: 41_580, Rejected: 301_168, Contended: true, AvgThroughput: 42_843.5,
				Latency: lat(729*time.Microsecond, 7415*time.Microsecond), ServerUsecPerCall: usec(5.1), Findings: fold.Findings{Peak: 20}},
			{Name: "eval", Attempts: 100_000, Admitted: 30_000, Rejected: 67_000, Errors: 3000, Contended: true, ReleaseErrors: 7, AvgThroughput: 12_500,
				ErrorsByKind: map[string]int64{"timeout": 2988, "conn": 12}, FailClosedRejects: 3000,
				Latency: lat(812*time.Microsecond, 9120*time.Microsecond), ServerUsecPerCall: usec(9.8), Findings: fold.Findings{Peak: 20}},
			{Name: "custom", Attempts: 50_000, Admitted: 400, Rejected: 49_600, Contended: true, AvgThroughput: 6250,
				Latency: lat(900*time.Microsecond, 5100*time.Microsecond), Findings: fold.Findings{Peak: 20, Refusals: fold.Refusals{FalseRejects: 1204, FirstFalseReject: &refusal.FalseReject{SentMs: 412.5, RepliedMs: 413.1, HeldOrAdmitted: 2, Limit: 20}, Tightest: &refusal.FalseReject{SentMs: 7021, RepliedMs: 7022.4, HeldOrAdmitted: 3, Limit: 20}}}},
		}}
}

// judged is the result of a run that found s, judged as hammer judges (no assertions).
func judged(s bench.Summary) hammer.Result {
	return hammer.Result{Summary: s, Judgement: hammer.Judge(hammer.Rules{Limiter: s.Limiter}, s)}
}

func TestHammerSummaryTableFits(t *testing.T) {
	s := summaryFixture()
	checkTableGolden(t, "hammer", judged(s).Table())

	// Every strategy's verdict, in plain words, one line each.
	got := strings.Join(judged(s).VerdictLines(nil, 0), "\n") + "\n"
	checkGolden(t, tablesGoldenDir+"/hammer_verdicts.golden", got)
	// On a terminal a verdict too long for it wraps under the verdict texts' column, every word kept.
	for _, width := range goldenWidths {
		wrapped := strings.Join(judged(s).VerdictLines(nil, width), "\n") + "\n"
		checkFits(t, wrapped, width)
		if !slices.Equal(strings.Fields(wrapped), strings.Fields(got)) {
			t.Errorf("at %d columns the verdicts lost words:\n%s", width, wrapped)
		}
		if width == 80 {
			checkGolden(t, tablesGoldenDir+"/hammer_verdicts_80.golden", wrapped)
		}
	}

	// tsv keeps every column in the JSON's units, whatever the terminal's width.
	var tsv bytes.Buffer
	if err := judged(s).Table().WriteTSV(&tsv); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(tsv.String(), "\n")
	if want := "strategy\tattempts\tadmitted\trejected\terrors\tretries\tpeak\tovershoot\tevents\tfalse_rejects\tthroughput_per_s\tp50\tp90\tp99\tp99.9\tmax\tserver_usec_per_call\tcontended\tunjudged\trelease_errors\tabandoned\tleaks"; lines[0] != want {
		t.Errorf("tsv header\n%s\nwant\n%s", lines[0], want)
	}
	if want := "naive\t110406\t49450\t60956\t0\t0\t64\t44\t29022\t0\t13801\t2.179ms\t8.041ms\t13.903ms\t27.806ms\t41.709ms\tn/a\tyes\t0\t0\t0\tn/a"; lines[1] != want {
		t.Errorf("tsv row\n%s\nwant\n%s", lines[1], want)
	}
	if want := "eval\t100000\t30000\t67000\t3000\t0\t20\t0\t0\t0\t12500\t0.812ms\t4.966ms\t9.120ms\t18.240ms\t27.360ms\t9.8\tyes\t0\t7\t0\tn/a"; lines[5] != want {
		t.Errorf("tsv row\n%s\nwant\n%s", lines[5], want)
	}
}

func TestVerdicts(t *testing.T) {
	s := summaryFixture()
	v := judged(s).VerdictLines(nil, 0)
	for i, want := range []string{
		"naive   OVERSHOOT    peak 64 of 20 (+44), 29,022 events in 8.0s",
		"multi   OVERSHOOT    peak 61 of 20 (+41), 3,264 events in 8.0s, 12 admits too late to judge",
		"watch   no evidence  peak 6 of 20: the limit was never reached, so nothing was tested",
		"lua     exact        peak 20 of 20, 0 events, 0 false rejects",
		"eval    errors       3,000 of 100,000 decisions failed (timeout 2,988, conn 12); peak 20 of 20, 7 releases failed",
		"custom  TOO STRICT   refused 1,204 while at most 3 of 20 were held, the first at 412ms",
	} {
		if v[i] != want {
			t.Errorf("verdict %d\n%q\nwant\n%q", i, v[i], want)
		}
	}
	// At or under 1% of decisions failing, a strategy that reached the limit held; its errors are counted.
	s.Strategies[4].Errors = 1000
	if got := judged(s).VerdictLines(nil, 0)[4]; got != "eval    exact        peak 20 of 20, 0 events, 0 false rejects (1,000 errors), 7 releases failed" {
		t.Errorf("eval with 1%% errors: %q", got)
	}
	// Contended is the engine's evidence that the limit was reached (a rejection counts even when
	// the witness missed the full instant): then a strategy below the limit held.
	s.Strategies[2].Contended, s.Strategies[2].Peak = true, 19
	if got := judged(s).VerdictLines(nil, 0)[2]; got != "watch   exact       peak 19 of 20, 0 events, 0 false rejects" {
		t.Errorf("a contended strategy: %q", got)
	}
	// Both sides of the limit at once; and a window limiter's evidence is about its window.
	s.Strategies[5].Overshoot, s.Strategies[5].Peak, s.Strategies[5].OvershootEvent = 2, 22, 5
	if got := judged(s).VerdictLines(nil, 0)[5]; got != "custom  OVERSHOOT, TOO STRICT  peak 22 of 20 (+2), 5 events in 8.0s; refused 1,204 while at most 3 of 20 were held, the first at 412ms" {
		t.Errorf("overshoot and too strict: %q", got)
	}
	s.Limiter = limiter.SlidingWindow
	if got := judged(s).VerdictLines(nil, 0)[5]; !strings.HasSuffix(got, "refused 1,204 while at most 3 of 20 were admitted in its window, the first at 412ms") {
		t.Errorf("a window limiter: %q", got)
	}
	// A run shared by id judges no refusals, and says so.
	s = summaryFixture()
	s.Strategies[3].RefusalsUnjudged, s.Strategies[3].NoRefusalJudged = bench.RefusalsShared, true
	if got := judged(s).VerdictLines(nil, 0)[3]; got != "lua     exact        peak 20 of 20, 0 events; refusals not judged: "+bench.RefusalsShared {
		t.Errorf("unjudged refusals: %q", got)
	}
}

// The verdict words are painted by what they claim: a wrong answer (either side of the limit,
// keys left behind) red, nothing proven (no evidence, not judged, errors) yellow, exact green; a
// word not named stays plain rather than pass for green.
func TestVerdictWordsArePaintedByWhatTheyClaim(t *testing.T) {
	cs := (&IOStreams{StdoutTTY: true, OutProfile: colorprofile.ANSI}).ColorScheme()
	if cs.Bad("x") == "x" {
		t.Fatal("the colour scheme paints nothing: the checks below would prove nothing")
	}
	for word, want := range map[string]string{
		verdict.Overshoot:  cs.Bad(verdict.Overshoot),
		verdict.TooStrict:  cs.Bad(verdict.TooStrict),
		verdict.Both:       cs.Bad(verdict.Both),
		verdict.Errors:     cs.Warn(verdict.Errors),
		verdict.NoEvidence: cs.Warn(verdict.NoEvidence),
		verdict.NotJudged:  cs.Warn(verdict.NotJudged),
		verdict.Exact:      cs.Good(verdict.Exact),
		verdict.Leaks:      cs.Bad(verdict.Leaks),
		"exact, LEAKS":     cs.Bad("exact, LEAKS"),
		"held":             "held",
	} {
		if got := paintVerdict(cs, verdict.Verdict{Word: word}); got != want {
			t.Errorf("%s painted %q, want %q", word, got, want)
		}
	}
}

// Abandoned requests show in the table once some strategy has them, and give way first on a
// narrow terminal; tsv always carries them.
func TestHammerTableShowsAbandonedRequestsWhereThereIsRoom(t *testing.T) {
	s := summaryFixture()
	s.Strategies[3].Abandoned = 83 // lua
	table := judged(s).Table()
	var wide, narrow, tsv bytes.Buffer
	if err := table.WriteTerminal(&wide, 240); err != nil {
		t.Fatal(err)
	}
	if err := table.WriteTerminal(&narrow, 80); err != nil {
		t.Fatal(err)
	}
	if err := table.WriteTSV(&tsv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wide.String(), "ABANDONED") || strings.Contains(narrow.String(), "ABANDONED") {
		t.Errorf("want the column at 240 columns and not at 80:\n%s\n%s", wide.String(), narrow.String())
	}
	if lua := strings.Split(tsv.String(), "\n")[4]; !strings.HasPrefix(lua, "lua\t") || !strings.HasSuffix(lua, "\t83\tn/a") {
		t.Errorf("tsv row %q, want lua's 83 abandoned before its leaks (not read here)", lua)
	}
	if v := judged(s).VerdictLines(nil, 0)[3]; !strings.HasSuffix(v, "0 false rejects, 83 abandoned") {
		t.Errorf("verdict line %q", v)
	}
}

// longVerdicts is the fixture's run with verdict texts as long as the fifth release makes them
// (custom's is 161 characters), a how-line, a clock note, a failed assertion and a clean-up line.
func longVerdicts() hammer.Result {
	res := judged(summaryFixture())
	res.Verdicts[3].Text = "the limiter counted 4 while 20 were held: it dropped held requests (stale time shorter than its clock's unit?)"
	res.Verdicts[5] = verdict.Verdict{Word: verdict.Exact, Text: "peak 20 of 20, 0 events, 0 false rejects; an overshoot of " +
		"up to +2 per window could have escaped this evidence where it was thinnest (skew 200ms, 64 workers, 3s)"}
	step := func(op, reply string, sent int64) trace.StepOut {
		return trace.StepOut{Op: op, Phase: map[string]string{"ZCARD": "check", "ZADD": "write"}[op], Reply: json.RawMessage(reply), SentUs: sent, RepliedUs: sent + 40}
	}
	held := int64(21)
	res.Summary.Strategies[0].FirstOvershoot = &trace.Overshoot{AtMs: 30, Held: &held, Limit: 20, Omitted: 19, Requests: []trace.Request{
		{ID: "r76", Raced: true, Steps: []trace.StepOut{step("ZCARD", "19", 100), step("ZADD", "1", 2920)}},
		{ID: "r65", Raced: true, Steps: []trace.StepOut{step("ZCARD", "19", 150), step("ZADD", "1", 3020)}},
	}}
	res.Options.Limiter, res.Options.Strategies = limiter.Concurrency, []limiter.Strategy{limiter.Naive, limiter.Custom}
	res.Options.Contract = &contract.Contract{Clock: contract.VirtualClock}
	res.KeysNotDeleted = 3
	res.Assertions = append(res.Assertions, verdict.AssertionResult{Expr: "custom.false_rejects==0", Actual: ptr(3.0),
		Reason: "refused 3 while at most 4 of 20 were held, the first at 412ms, the tightest at 7.02s with 3 held"})
	return res
}

// On a terminal every line of the summary wraps at its spaces to the width, colour codes
// taking no room: a verdict continues under the verdict texts' column, nothing is cut, every
// word is there in its order. Piped, the same lines stay whole on stderr for a log.
func TestHammerSummaryWrapsEveryLineToTheTerminal(t *testing.T) {
	res := longVerdicts()
	whole := res.VerdictLines(nil, 0)
	if n := utf8.RuneCountInString(res.Verdicts[5].Text); n != 161 {
		t.Fatalf("custom's verdict text is %d characters, want 161", n)
	}
	const textColumn = len("custom  no evidence  ")
	for _, width := range []int{80, 60} {
		streams, _, out, errOut := TestStreams()
		streams.StdoutTTY, streams.Columns, streams.OutProfile = true, width, colorprofile.ANSI
		if err := writeHammerSummary(&Factory{IO: streams}, tableprint.FormatTable, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "\x1b[") {
			t.Fatalf("nothing painted at %d: the check that colour takes no room proves nothing", width)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		for _, l := range append(lines, strings.Split(errOut.String(), "\n")...) {
			if w := ansi.StringWidth(l); w > width || strings.Contains(l, "…") {
				t.Errorf("at %d columns a line of %d, or cut: %q", width, w, l)
			}
		}
		// Below the table, each verdict is its first line and the lines under its text column.
		var verdicts []string
		for _, l := range lines[slices.Index(lines, "")+1:] {
			plain := ansi.Strip(l)
			switch {
			case len(verdicts) < len(whole) && strings.HasPrefix(plain, res.Summary.Strategies[len(verdicts)].Name+" ") && !strings.Contains(plain, " how: "):
				verdicts = append(verdicts, plain)
			case len(verdicts) > 0 && len(verdicts) <= len(whole) && strings.HasPrefix(plain, strings.Repeat(" ", textColumn)) && !strings.Contains(verdicts[len(verdicts)-1], " how: "):
				if plain[textColumn] == ' ' {
					t.Errorf("at %d a continuation past the text column: %q", width, plain)
				}
				verdicts[len(verdicts)-1] += "\n" + plain
			}
		}
		if len(verdicts) != len(whole) {
			t.Fatalf("at %d found %d verdicts, want %d:\n%s", width, len(verdicts), len(whole), ansi.Strip(out.String()))
		}
		for i, v := range verdicts {
			if got, want := strings.Fields(v), strings.Fields(whole[i]); !slices.Equal(got, want) {
				t.Errorf("at %d verdict %d reads\n%q\nwant the words of\n%q", width, i, v, whole[i])
			}
		}
		if !strings.Contains(verdicts[5], "\n") || !strings.Contains(verdicts[3], "\n") {
			t.Errorf("at %d the long verdicts did not wrap:\n%s", width, strings.Join(verdicts, "\n"))
		}
		text := strings.Join(strings.Fields(ansi.Strip(out.String())), " ")
		for _, want := range []string{
			"naive how: r76 ZCARD → 19 (+0.00ms) · r65 ZCARD → 19 (+0.05ms) · r76 ZADD (+2.82ms) · r65 ZADD (+2.92ms) → 21 held at 0.03s, limit 20 (r76, r65 raced; 19 more in the JSON)",
			"custom: clock virtual: the hammer answered the script's TIME",
			"clean-up: 3 of the run's keys could not be deleted (see the warnings above)",
			"FAIL custom.false_rejects==0 (actual 3; refused 3 while at most 4 of 20 were held, the first at 412ms, the tightest at 7.02s with 3 held)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("at %d the summary lacks %q:\n%s", width, want, ansi.Strip(out.String()))
			}
		}
	}

	// Piped: tsv on stdout, every verdict whole on stderr.
	streams, _, _, errOut := TestStreams()
	if err := writeHammerSummary(&Factory{IO: streams}, tableprint.FormatTSV, res); err != nil {
		t.Fatal(err)
	}
	for _, v := range whole {
		if !strings.Contains(errOut.String(), v+"\n") {
			t.Errorf("piped, stderr lacks the whole line %q:\n%s", v, errOut.String())
		}
	}
	// stdout piped, stderr a terminal whose width cannot be read: the lines there fit 80.
	streams, _, _, errOut = TestStreams()
	streams.StderrTTY = true
	if err := writeHammerSummary(&Factory{IO: streams}, tableprint.FormatTSV, res); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(errOut.String(), "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("on a terminal's stderr a line of %d: %q", ansi.StringWidth(l), l)
		}
	}
}
