package cmd

import (
	"bytes"
	"html"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/ciformat"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/report"
	"github.com/limitctl/limitctl/internal/tui"
)

// Every view shows a strategy's verdict by the verdict's own badge and tone: the terminal's
// verdict line, the dashboard's panel, the HTML report and the step summary, for every kind of
// verdict.
func TestEveryViewShowsTheVerdictsOwnBadge(t *testing.T) {
	contended := bench.StrategySnapshot{Name: "lua", Attempts: 1000, Admitted: 600, Rejected: 400, Contended: true, Findings: fold.Findings{Peak: 20}}
	for name, set := range map[string]func(*bench.StrategySnapshot){
		"exact":     func(*bench.StrategySnapshot) {},
		"overshoot": func(s *bench.StrategySnapshot) { s.Peak, s.Overshoot, s.OvershootEvent = 25, 5, 3 },
		"too strict": func(s *bench.StrategySnapshot) {
			s.FalseRejects, s.Tightest = 4, &refusal.FalseReject{HeldOrAdmitted: 3, Limit: 20}
		},
		"leaks": func(s *bench.StrategySnapshot) { s.Leaks = &bench.Leaks{KeysWithoutTTL: 2} },
		"no evidence": func(s *bench.StrategySnapshot) {
			s.Contended, s.Rejected, s.Peak = false, 0, 3
		},
		"not judged": func(s *bench.StrategySnapshot) { s.Unjudged = s.Admitted },
		"errors":     func(s *bench.StrategySnapshot) { s.Errors, s.ErrorsByKind = 200, map[string]int64{"timeout": 200} },
	} {
		t.Run(name, func(t *testing.T) {
			st := contended
			set(&st)
			sum := bench.Summary{Limiter: limiter.Concurrency, Limit: 20, Workers: 8, Duration: 5 * time.Second, Strategies: []bench.StrategySnapshot{st}}
			v := verdict.Judge(st, sum.Limiter, sum.Limit, sum.Duration)
			if v.Word != name && !strings.HasPrefix(strings.ToLower(v.Word), name) && !strings.HasSuffix(strings.ToLower(v.Word), name) {
				t.Fatalf("the fixture for %s was judged %q: the checks below would prove nothing", name, v.Word)
			}
			badge, tone := v.Badge(), v.Tone()
			res := hammer.Result{Summary: sum, Judgement: hammer.Judge(hammer.Rules{Limiter: sum.Limiter}, sum)}

			cs := (&IOStreams{StdoutTTY: true, OutProfile: colorprofile.ANSI}).ColorScheme()
			paint := map[verdict.Tone]func(string) string{verdict.ToneBad: cs.Bad, verdict.ToneGood: cs.Good, verdict.ToneWarn: cs.Warn}[tone]
			if line := res.VerdictLines(func(v verdict.Verdict) string { return paintVerdict(cs, v) }, 0)[0]; !strings.Contains(line, paint(badge)) {
				t.Errorf("terminal: %q lacks the badge %q in its tone %s", line, badge, tone)
			}

			m := tui.New(tui.Options{Limiter: string(sum.Limiter), Limit: sum.Limit, Workers: 8, Profile: colorprofile.ASCII, Verdict: verdict.InSnapshot})
			next, _ := m.Update(tui.SnapshotMsg{Snapshot: bench.Snapshot{Limiter: sum.Limiter, Limit: sum.Limit, Elapsed: sum.Duration, Done: true, Strategies: sum.Strategies}})
			next, _ = next.(tui.Model).Update(tea.WindowSizeMsg{Width: 120, Height: 30})
			if view := next.(tui.Model).View().Content; !strings.Contains(view, " "+badge+" ─╮") {
				t.Errorf("dashboard: the panel's badge is not %q:\n%s", badge, view)
			}

			var page bytes.Buffer
			if err := report.Write(&page, report.Data{Summary: sum}); err != nil {
				t.Fatal(err)
			}
			if want := `<span class="badge ` + string(tone) + `">` + html.EscapeString(badge) + `</span>`; !strings.Contains(page.String(), want) {
				t.Errorf("report: no %s", want)
			}

			if step := string(ciformat.HammerStepSummary(res)); !strings.Contains(step, "| lua | **"+badge+"** |") {
				t.Errorf("step summary: no row with the badge %q:\n%s", badge, step)
			}
		})
	}
}
