package cmd

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/termtest"
)

// noWrappedLines fails when a line the terminal printed, on screen or scrolled off the top, was
// wider than the terminal or cut: capture-pane -J joins a wrapped line back into one, so a line
// wider than width wrapped on screen. It returns everything printed.
func noWrappedLines(t *testing.T, m *termtest.Term, width int) string {
	t.Helper()
	history := m.History()
	for _, line := range strings.Split(history, "\n") {
		if n := ansi.StringWidth(strings.TrimRight(line, " ")); n > width {
			t.Errorf("a line of %d columns wrapped on a %d-column terminal:\n%s\nprinted:\n%s", n, width, line, history)
		}
		if strings.Contains(line, "…") {
			t.Errorf("a line was cut:\n%s\nprinted:\n%s", line, history)
		}
	}
	return history
}

// summaryLines are the printed lines after the table, each with the lines that continue it (an
// indented line continues the one above, as a verdict continues under its text and a how-line
// under its first token), and how far each continuation was indented.
func summaryLines(printed string) (lines []string, indents [][]int) {
	_, below, _ := strings.Cut(printed, "\n\n")
	for _, l := range strings.Split(below, "\n") {
		if text := strings.TrimLeft(l, " "); text != l && text != "" && len(lines) > 0 {
			lines[len(lines)-1] += " " + strings.TrimRight(text, " ")
			indents[len(indents)-1] = append(indents[len(indents)-1], len(l)-len(text))
			continue
		}
		lines, indents = append(lines, strings.TrimRight(l, " ")), append(indents, nil)
	}
	return lines, indents
}

// The first run a new user makes, on a default 80x24 terminal: when the dashboard closes every
// line the summary printed fits without wrapping, nothing is cut, and a line too long for the
// terminal (a how-line, whose events vary run to run; a long verdict) continues under its
// text. With more strategies the names are longer, the indents deeper and the summary taller
// than the screen.
func TestHammerSummaryFitsAnEightyColumnTerminal(t *testing.T) {
	srv := redistest.Start(t)
	for _, strategies := range []string{"", "naive,multi,watch,lua,lua-ts-member"} {
		t.Run("strategies="+strategies, func(t *testing.T) {
			args := " --addr " + srv.Addr + " hammer --duration 3s"
			if strategies != "" {
				args += " --strategies " + strategies
			}
			m := shell(t, 80, 24, binary(t)+args)
			m.WaitForText(60*time.Second, "EXIT=")
			printed := noWrappedLines(t, m, 80)
			wants := []string{"EXIT=0", "STRATEGY", "PEAK", "OVERSHOOT", "FALSE REJ", "concurrency limiter, limit 20"}
			if strategies == "" { // longer names leave no room for the latency
				wants = append(wants, "P50/P99")
			}
			for _, want := range wants {
				if !strings.Contains(printed, want) {
					t.Errorf("the summary lacks %q:\n%s", want, printed)
				}
			}
			names := strings.Split(cmp.Or(strategies, "naive,lua"), ",")
			nameW := len(slices.MaxFunc(names, func(a, b string) int { return len(a) - len(b) }))
			lines, indents := summaryLines(printed)
			verdicts := map[string]string{}
			textColumn := 0
			for i, line := range lines {
				f := strings.Fields(line)
				if len(f) < 3 || !slices.Contains(names, f[0]) {
					continue
				}
				column := 0 // where the line's continuations belong
				switch f[1] {
				case "how:":
					column = nameW + len("  how: ")
				case "refused:":
					column = nameW + len("  refused: ")
				default:
					verdicts[f[0]] = strings.Join(f[1:], " ")
					badge := line[nameW+2:] // the badge, then two spaces or more, then the text
					gap := strings.Index(badge, "  ")
					if gap < 0 {
						t.Fatalf("a verdict line without its text: %q", line)
					}
					column = nameW + 2 + gap + len(badge[gap:]) - len(strings.TrimLeft(badge[gap:], " "))
					if textColumn != 0 && column != textColumn {
						t.Errorf("the verdict texts start at columns %d and %d:\n%s", textColumn, column, printed)
					}
					textColumn = column
				}
				for _, in := range indents[i] {
					if in != column {
						t.Errorf("a continuation of %q indented %d, want %d:\n%s", f[0]+" "+f[1], in, column, printed)
					}
				}
			}
			if len(verdicts) != len(names) {
				t.Errorf("%d verdict lines, want one per strategy of %q:\n%s", len(verdicts), names, printed)
			}
			if strategies != "" {
				return // five strategies on two cores: lua may not reach its limit
			}
			if v := verdicts["lua"]; !strings.HasPrefix(v, "exact peak 20 of 20, 0 events, 0 false rejects") {
				t.Errorf("lua's verdict %q, want exact at 20 of 20:\n%s", v, printed)
			}
			v := verdicts["naive"]
			if !strings.HasPrefix(v, "OVERSHOOT peak ") && !strings.HasPrefix(v, "no evidence") {
				t.Errorf("naive's verdict %q:\n%s", v, printed)
			}
			if strings.HasPrefix(v, "OVERSHOOT") && !strings.Contains(printed, "naive"+strings.Repeat(" ", nameW-len("naive"))+"  how: ") {
				t.Errorf("naive overshot and no how-line says how:\n%s", printed)
			}
		})
	}
}

// inspect's table at 80x24 never cuts a key or a flag: the other columns give way, and a key
// too long for the room beside it runs past the edge (capture-pane -J joins the wrapped line).
func TestInspectFitsAnEightyColumnTerminal(t *testing.T) {
	srv := redistest.Start(t)
	seedLimiterKeys(t, srv.Client(t))
	long := "limitctl:{checkout-api}:concurrency:tenant:acme-industries-international"
	if err := srv.Client(t).ZAdd(t.Context(), long, redis.Z{Score: 1, Member: "req-1"}).Err(); err != nil {
		t.Fatal(err)
	}
	m := shell(t, 80, 24, binary(t)+" --addr "+srv.Addr+" inspect 'rl:*' 'limitctl:*' --stale 10m --limit 3")
	m.WaitForText(15*time.Second, "EXIT=")
	screen := m.Joined()
	for _, want := range []string{"EXIT=0", "KEY", "rl:conc:u1", "STALE,OVER_LIMIT", long, "total (9 keys)"} {
		if !strings.Contains(screen, want) {
			t.Errorf("inspect at 80 columns lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "…") {
		t.Errorf("inspect at 80 columns cut something:\n%s", screen)
	}
}
