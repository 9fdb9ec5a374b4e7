package cmd

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/termtest"
)

// noWrappedLines fails when a line of the pane was wider than the terminal: capture-pane -J
// joins a wrapped line back into one, so a line longer than width wrapped on screen.
func noWrappedLines(t *testing.T, m *termtest.Term, width int) string {
	t.Helper()
	joined := m.Joined()
	for _, line := range strings.Split(joined, "\n") {
		if n := utf8.RuneCountInString(strings.TrimRight(line, " ")); n > width {
			t.Errorf("a line of %d columns wrapped on a %d-column terminal:\n%s\nscreen:\n%s", n, width, line, m.Screen())
		}
	}
	return joined
}

// The first run a new user makes, on a default 80x24 terminal: when the dashboard closes the
// summary fits without wrapping and says in one line per strategy who overshot.
func TestHammerSummaryFitsAnEightyColumnTerminal(t *testing.T) {
	srv := redistest.Start(t)
	m := shell(t, 80, 24, binary(t)+" --addr "+srv.Addr+" hammer --duration 3s")
	m.WaitForText(30*time.Second, "EXIT=")
	screen := noWrappedLines(t, m, 80)
	for _, want := range []string{"EXIT=0", "STRATEGY", "PEAK", "OVERSHOOT", "FALSE REJ", "P50/P99", "concurrency limiter, limit 20"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the summary lacks %q:\n%s", want, screen)
		}
	}
	verdict := map[string]string{}
	for _, line := range strings.Split(screen, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && (f[0] == "naive" || f[0] == "lua") && (f[2] == "peak" || f[1] == "no") { // not a table row
			verdict[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if v := verdict["lua"]; !strings.HasPrefix(v, "exact peak 20 of 20, 0 events, 0 false rejects") {
		t.Errorf("lua's verdict %q, want exact at 20 of 20:\n%s", v, screen)
	}
	if v := verdict["naive"]; !strings.HasPrefix(v, "OVERSHOOT peak ") && !strings.HasPrefix(v, "no evidence") {
		t.Errorf("naive's verdict %q:\n%s", v, screen)
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
