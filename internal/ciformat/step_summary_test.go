package ciformat

import (
	"errors"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/bench/verdict"
)

func TestHammerStepSummaryHasVerdictsAssertionsAndFigures(t *testing.T) {
	sum := summaryOf()
	res := resultOf(t, sum, nil, "lua.overshoot==0", "lua.admitted>500", "custom.overshoot==0 implied")
	res.Failures = []string{"assertion failed: lua.admitted>500 (actual 300)"}
	md := string(HammerStepSummary(res))
	for _, want := range []string{
		"### limitctl hammer: FAILED\n",
		"concurrency limiter, limit 20, 64 workers per strategy, 2.5s on redis-server 127.0.0.1:7000 (run id `r1`)",
		"| `lua.overshoot==0` | PASS | 0 |",
		"| `lua.admitted>500` | **FAIL** | 300 |",
		"| `custom.overshoot==0` (implied by --script) | **FAIL** | 0; limit never reached: no evidence |",
		"- assertion failed: lua.admitted&gt;500 (actual 300)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	// A row per strategy with the verdict line's word and evidence (bench's Judge) and figures.
	for _, st := range sum.Strategies {
		v := verdict.Judge(st, sum.Limiter, sum.Limit, sum.Duration)
		if !strings.Contains(md, "| "+st.Name+" | **"+v.Word+"** | "+v.Text+" |") {
			t.Errorf("no row for %s with %q: %s\n%s", st.Name, v.Word, v.Text, md)
		}
	}
	if !strings.Contains(md, "| naive | **OVERSHOOT** | peak 64 of 20 (+44), 99 events in 2.5s | 64 | 44 | 600 | 400 | 0 |") {
		t.Errorf("naive's figures missing:\n%s", md)
	}
	// Every table row has as many cells as its header.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| strategy") || strings.HasPrefix(line, "| naive") || strings.HasPrefix(line, "| lua") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 12 {
				t.Errorf("%d cell borders, want 12: %s", n, line)
			}
		}
	}
}

// A | in a value would split its cell; a < could open an HTML tag.
func TestStepSummaryCellsEscapeMarkdown(t *testing.T) {
	if got := mdCell("a|b <script>\nc"); got != `a\|b &lt;script&gt; c` {
		t.Errorf("mdCell: %q", got)
	}
	if got := mdCode("x.p99<5ms|y"); got != "`x.p99<5ms\\|y`" {
		t.Errorf("mdCode: %q", got)
	}
}

func TestHammerStepSummaryOfAPassingRun(t *testing.T) {
	sum := summaryOf()
	sum.Strategies = sum.Strategies[:2]
	md := string(HammerStepSummary(resultOf(t, sum, nil)))
	if !strings.HasPrefix(md, "### limitctl hammer: passed\n") || strings.Contains(md, "| assertion |") || strings.Contains(md, "Why it failed") {
		t.Errorf("passing run without assertions:\n%s", md)
	}
	if md := string(ErrorStepSummary("hammer", errors.New("connection refused"), false)); md != "### limitctl hammer: could not run\n\nconnection refused\n\n" {
		t.Errorf("error summary %q", md)
	}
	if md := string(ErrorStepSummary("hammer", errors.New("lint found errors in x.lua"), true)); !strings.HasPrefix(md, "### limitctl hammer: FAILED\n") {
		t.Errorf("check failed summary %q", md)
	}
}
