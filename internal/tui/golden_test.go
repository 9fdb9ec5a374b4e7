package tui

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/golden"
	"github.com/limitctl/limitctl/internal/human"
)

const goldenDir = "../../testdata/tui"

// judgeFixture decides the fixture's asserts the way the hammer would: from the numbers.
func judgeFixture(s bench.Snapshot) []AssertResult {
	var naive, lua *bench.StrategySnapshot
	for i := range s.Strategies {
		switch s.Strategies[i].Name {
		case "naive":
			naive = &s.Strategies[i]
		case "lua":
			lua = &s.Strategies[i]
		}
	}
	out := []AssertResult{{Expr: "lua.overshoot==0"}, {Expr: "naive.overshoot>0"}, {Expr: "lua.p99<5ms"}}
	if lua != nil {
		out[0] = AssertResult{Expr: out[0].Expr, Known: true, Passed: lua.Overshoot == 0, Actual: human.Count(lua.Overshoot)}
	}
	if naive != nil && s.Done {
		out[1] = AssertResult{Expr: out[1].Expr, Known: true, Passed: naive.Overshoot > 0, Actual: human.Count(naive.Overshoot)}
	}
	if lua != nil && s.Done {
		out[2] = AssertResult{Expr: out[2].Expr, Known: true, Passed: lua.Latency.P99 < 5e6, Actual: human.Latency(lua.Latency.P99)}
	}
	return out
}

// scenarios are the dashboards the golden files pin, each drawn at every size.
var scenarios = []struct {
	name  string
	build func() Model
}{
	{"no_overshoot", func() Model {
		return feed(New(asciiOptions()), fixtureRun(42, strategyShape{name: "lua", server: 6.4},
			strategyShape{name: "eval", server: 9.8})...)
	}},
	{"overshoot", func() Model {
		o := asciiOptions()
		o.Asserts = []string{"lua.overshoot==0", "naive.overshoot>0", "lua.p99<5ms"}
		o.Judge = judgeFixture
		return feed(New(o), fixtureRun(64, naiveShape, luaShape)...)
	}},
	{"errors", func() Model {
		return feed(New(asciiOptions()), fixtureRun(50,
			strategyShape{name: "naive", overshoot: true, errorRate: 0.04},
			strategyShape{name: "watch", errorRate: 0.01, retries: true, server: 14.2})...)
	}},
	{"paused", func() Model {
		o := asciiOptions()
		o.Controls = &fakeControls{}
		m := feed(New(o), fixtureRun(30, naiveShape, luaShape)...)
		return press(m, "p")
	}},
	{"finished", func() Model {
		o := asciiOptions()
		o.Asserts = []string{"lua.overshoot==0", "naive.overshoot>0", "lua.p99<5ms"}
		o.Judge = judgeFixture
		snaps := fixtureRun(100, naiveShape, luaShape)
		snaps[len(snaps)-1].Done = true
		return feed(New(o), snaps...)
	}},
	{"four_strategies", func() Model {
		return feed(New(asciiOptions()), fixtureRun(80, naiveShape,
			strategyShape{name: "multi", overshoot: true, server: 4.0},
			strategyShape{name: "watch", retries: true, server: 11.5}, luaShape)...)
	}},
	{"help", func() Model {
		return press(feed(New(asciiOptions()), fixtureRun(20, naiveShape, luaShape)...), "?")
	}},
	{"how", func() Model {
		// naive's first overshoot is known: h shows how it happened, the footer offers it.
		snaps := fixtureRun(30, naiveShape, luaShape)
		for i := 10; i < len(snaps); i++ {
			snaps[i].Strategies[0].FirstOvershoot = fixtureRace()
		}
		return press(feed(New(asciiOptions()), snaps...), "h")
	}},
	{"waiting", func() Model { return New(asciiOptions()) }},
	{"too_strict", func() Model {
		// A limiter that refuses with room: the other red, beside one that holds exactly.
		return feed(New(asciiOptions()), fixtureRun(60, strategyShape{name: "custom", tooStrict: true}, luaShape)...)
	}},
	{"sliding_window_requests", func() Model {
		// A window limiter bounded by --requests: no total time, progress by count.
		o := asciiOptions()
		o.Limiter, o.CountLabel, o.Total = "sliding-window", "in window", 0
		snaps := fixtureRun(45, naiveShape, luaShape)
		for i := range snaps {
			snaps[i].Limiter, snaps[i].Total, snaps[i].Progress = "sliding-window", 0, float64(i+1)/90
		}
		return feed(New(o), snaps...)
	}},
}

var sizes = []struct{ w, h int }{{80, 24}, {160, 48}}

func TestGoldenViews(t *testing.T) {
	for _, sc := range scenarios {
		for _, size := range sizes {
			name := sc.name + "_" + itoa(size.w) + "x" + itoa(size.h)
			t.Run(name, func(t *testing.T) {
				view := resize(sc.build(), size.w, size.h).View().Content
				checkFits(t, view, size.w, size.h)
				if strings.Contains(view, "\x1b[") {
					t.Fatal("ASCII profile view contains escape sequences")
				}
				golden.Check(t, filepath.Join(goldenDir, name+".golden"), view)
			})
		}
	}
}

// checkFits fails when a view would scroll or wrap the terminal.
func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("view has %d lines, terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Errorf("line %d is %d wide, terminal is %d: %q", i+1, lw, w, l)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A strategy that has not reached its limit has no evidence yet: its badge says so (the
// verdict's "no evidence") instead of "exact", which would read as a pass.
func TestBadgeSaysLimitNotReachedWithoutContention(t *testing.T) {
	snaps := fixtureRun(42, strategyShape{name: "lua"})
	for i := range snaps {
		for j := range snaps[i].Strategies {
			snaps[i].Strategies[j].Contended = false
		}
	}
	view := resize(feed(New(asciiOptions()), snaps...), 120, 30).View().Content
	if !strings.Contains(view, verdict.NoEvidence) || strings.Contains(view, verdict.Exact) {
		t.Errorf("uncontended strategy's badge:\n%s", view)
	}
	view = resize(feed(New(asciiOptions()), fixtureRun(42, strategyShape{name: "lua"})...), 120, 30).View().Content
	if !strings.Contains(view, verdict.Exact) {
		t.Errorf("contended strategy at 0 lost its badge:\n%s", view)
	}
}

// A strategy with refusals proven wrong says so in its badge and with its count, whatever its
// overshoot; one whose refusals were not judged (a shared run) says n/a, not 0.
func TestPanelShowsFalseRejects(t *testing.T) {
	view := resize(feed(New(asciiOptions()), fixtureRun(42, strategyShape{name: "custom", tooStrict: true})...), 120, 30).View().Content
	if !strings.Contains(view, "TOO STRICT") || !strings.Contains(view, "false rej. 3,") {
		t.Errorf("too strict strategy:\n%s", view)
	}
	snaps := fixtureRun(42, strategyShape{name: "lua"})
	for i := range snaps {
		snaps[i].Strategies[0].RefusalsUnjudged, snaps[i].Strategies[0].NoRefusalJudged = bench.RefusalsShared, true
	}
	view = resize(feed(New(asciiOptions()), snaps...), 120, 30).View().Content
	if !strings.Contains(view, "false rej. n/a") || strings.Contains(view, "TOO STRICT") {
		t.Errorf("unjudged refusals:\n%s", view)
	}
}

// The final snapshot carries what the end-of-run read found: a strategy that left keys without
// a TTL says LEAKS in its badge, beside its limit's word; one whose allowances left the
// evidence blind says not judged rather than exact.
func TestPanelShowsLeaksAndNotJudged(t *testing.T) {
	snaps := fixtureRun(42, strategyShape{name: "custom"})
	last := &snaps[len(snaps)-1].Strategies[0]
	last.Leaks = &bench.Leaks{KeysWithoutTTL: 3}
	view := resize(feed(New(asciiOptions()), snaps...), 120, 30).View().Content
	if !strings.Contains(view, verdict.Exact+", "+verdict.Leaks) {
		t.Errorf("leaking strategy:\n%s", view)
	}
	snaps = fixtureRun(42, strategyShape{name: "custom"})
	for i := range snaps {
		st := &snaps[i].Strategies[0]
		st.Unjudged = st.Admitted
	}
	view = resize(feed(New(asciiOptions()), snaps...), 120, 30).View().Content
	if !strings.Contains(view, verdict.NotJudged) || strings.Contains(view, verdict.Exact) {
		t.Errorf("strategy not judged:\n%s", view)
	}
}

// Requests abandoned on purpose show among the counts that are shown only when not zero.
func TestPanelShowsAbandonedRequests(t *testing.T) {
	snaps := fixtureRun(42, strategyShape{name: "lua"})
	for i := range snaps {
		snaps[i].Strategies[0].Abandoned = 13
	}
	view := resize(feed(New(asciiOptions()), snaps...), 120, 30).View().Content
	if !strings.Contains(view, "abandoned 13") {
		t.Errorf("abandoned requests not shown:\n%s", view)
	}
	checkFits(t, resize(feed(New(asciiOptions()), snaps...), 60, 24).View().Content, 60, 24)
}
