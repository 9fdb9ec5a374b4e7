package ciformat

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/limitctl/limitctl/internal/hammer"
	"github.com/limitctl/limitctl/internal/human"
)

// HammerStepSummary is a hammer run as the Markdown section a GitHub Actions step appends to
// $GITHUB_STEP_SUMMARY: whether it passed, what ran, a row per strategy with its verdict (the
// word and evidence of the verdict lines) and key figures, each assertion with its actual value,
// and why the run failed.
func HammerStepSummary(res hammer.Result) []byte {
	s := res.Summary
	var b bytes.Buffer
	outcome := "passed"
	switch {
	case res.Interrupted:
		outcome = "interrupted (partial results)"
	case !res.Passed():
		outcome = "FAILED"
	}
	processes := ""
	if s.Processes > 0 {
		processes = " across " + human.Count(int64(s.Processes)) + " processes"
	}
	fmt.Fprintf(&b, "### limitctl %s: %s\n\n", hammerCommand(s), outcome)
	fmt.Fprintf(&b, "%s limiter, limit %s, %s workers per strategy%s, %s on %s (run id `%s`)\n\n",
		s.Limiter, human.Count(s.Limit), human.Count(int64(s.Workers)), processes, human.Elapsed(s.Duration),
		mdCell(strings.TrimSpace(s.Target.Kind+" "+s.Target.Addr)), s.RunID)
	if line := res.ExtensionLine(); line != "" {
		fmt.Fprintf(&b, "The evidence was thin at the run's bound: %s\n\n", mdCell(line))
	}

	b.WriteString("| strategy | verdict | evidence | peak | overshoot | admitted | rejected | errors | decisions/s | p50 | p99 |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for i, st := range s.Strategies {
		v := res.Verdicts[i]
		fmt.Fprintf(&b, "| %s | **%s** | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdCell(st.Name), mdCell(v.Badge()), mdCell(v.Text), human.Count(st.Peak), human.Count(st.Overshoot),
			human.Count(st.Admitted), human.Count(st.Rejected), human.Count(st.Errors),
			human.Count(int64(math.Round(st.AvgThroughput))), human.Latency(st.Latency.P50), human.Latency(st.Latency.P99))
	}
	if len(res.Assertions) > 0 {
		b.WriteString("\n| assertion | result | actual |\n|---|---|---|\n")
		for _, a := range res.Assertions {
			result, expr := "PASS", mdCode(a.Expr)
			if !a.Passed {
				result = "**FAIL**"
			}
			if a.Implied {
				expr += " (implied by --script)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", expr, result, mdCell(hammer.ActualText(a)))
		}
	}
	if len(res.Failures) > 0 {
		b.WriteString("\nWhy it failed:\n\n")
		for _, f := range res.Failures {
			fmt.Fprintf(&b, "- %s\n", mdCell(f))
		}
	}
	b.WriteString("\n")
	return b.Bytes()
}

// mdCell makes text safe in a Markdown table cell: a | would end the cell, a line break the row,
// and < > could open an HTML tag GitHub strips.
var mdCellEscaper = strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ", "<", "&lt;", ">", "&gt;")

func mdCell(s string) string { return mdCellEscaper.Replace(s) }

// mdCode is s as inline code in a table cell: verbatim but for the | that GitHub's tables split
// on even there.
func mdCode(s string) string {
	return "`" + strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s) + "`"
}

// ErrorStepSummary is the section of a command that ended without a result: FAILED for a check
// that failed before any load (checkFailed), else could not run.
func ErrorStepSummary(command string, err error, checkFailed bool) []byte {
	outcome := "could not run"
	if checkFailed {
		outcome = "FAILED"
	}
	return []byte(fmt.Sprintf("### limitctl %s: %s\n\n%s\n\n", command, outcome, mdCell(err.Error())))
}
