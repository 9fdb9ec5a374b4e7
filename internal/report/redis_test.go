package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistrace"
	"github.com/limitctl/limitctl/internal/trace"
)

// A traced HTTP target's section says how its application decides beside its verdict, coloured
// by what it is, and lists the commands behind its first overshoot with the race's two reads and
// writes marked and told; an untraced strategy shows none of it.
func TestReportShowsTheApplicationsCommands(t *testing.T) {
	count := int64(25)
	cmd := func(name, reply string, at int64, client string) trace.RedisCommand {
		return trace.RedisCommand{Cmd: name, Keys: []string{"app:w:ab.0"}, Client: client, AtUs: at, Reply: json.RawMessage(reply), ReplyFrom: "replay"}
	}
	first := &trace.Overshoot{Limit: 20, InWindow: &count, Redis: &trace.RedisCommands{Keys: []string{"app:w:ab.0"},
		Commands: []trace.RedisCommand{cmd("GET", `"9"`, 100, "10.0.0.1:1"), cmd("GET", `"9"`, 120, "10.0.0.1:2"),
			cmd("INCR", "10", 300, "10.0.0.1:1"), cmd("INCR", "11", 320, "10.0.0.1:2")},
		Race: &trace.RedisRace{Key: "app:w:ab.0", Reads: [2]int{0, 1}, Writes: []int{2, 3}}}}
	page := writeReport(t, Data{
		Summary: bench.Summary{Limiter: limiter.FixedWindow, Limit: 20, Strategies: []bench.StrategySnapshot{
			{Name: "naive", Attempts: 100, Admitted: 25, Rejected: 75, Contended: true,
				Findings: fold.Findings{Peak: 25, Overshoot: 5, OvershootEvent: 1, FirstOvershoot: first}},
			{Name: "lua", Attempts: 100, Admitted: 20, Rejected: 80, Contended: true, Findings: fold.Findings{Peak: 20}},
		}},
		Redis: map[string]*redistrace.Summary{"naive": {Decision: redistrace.CheckThenAct, Why: "every request read (GET) and only admits wrote (INCR)"}},
	})
	byID, _ := parse(t, page)
	if e := byID["redis-naive"]; e == nil || !strings.Contains(e.text, "check-then-act: every request read (GET)") {
		t.Errorf("no decision beside naive's verdict: %+v", e)
	}
	if !strings.Contains(page, `<span class="badge bad">redis</span>`) {
		t.Error("check-then-act is not coloured as a fault")
	}
	table := byID["redis-commands-naive"]
	if table == nil || !strings.Contains(table.text, "INCR") {
		t.Fatalf("no commands table: %+v", table)
	}
	if n := strings.Count(page, `class="race read"`); n != 2 {
		t.Errorf("%d reads marked, want 2", n)
	}
	if n := strings.Count(page, `class="race write"`); n != 2 {
		t.Errorf("%d writes marked, want 2", n)
	}
	if !strings.Contains(page, "two reads of 9 before either INCR of app:w:ab.0") {
		t.Error("the race is not told")
	}
	if byID["redis-lua"] != nil || byID["redis-commands-lua"] != nil {
		t.Error("an untraced strategy shows a trace")
	}
}
