package tui

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
)

// A progress line fits 100 columns whatever runs: eight strategies with the largest numbers
// wrap onto indented lines (only a tick's first line starts with "["), each strategy whole.
func TestProgressLinesFitAHundredColumns(t *testing.T) {
	snap := bench.Snapshot{Elapsed: 9*time.Minute + 59*time.Second, Total: 10 * time.Minute, Limit: 1_000_000_000, Paused: true}
	names := []string{"naive", "multi", "watch", "lua", "eval", "function", "lua-ts-member", "custom"}
	for _, name := range names {
		st := bench.StrategySnapshot{Name: name, Throughput: 123_456.7, Errors: 12_345_678, Findings: fold.Findings{Peak: 1_999_999_999, Overshoot: 999_999_999}}
		st.Latency.P99 = 1234 * time.Millisecond
		snap.Strategies = append(snap.Strategies, st)
	}
	out := ProgressLine(snap)
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > progressWidth {
			t.Errorf("a progress line of %d columns:\n%s", n, l)
		}
		if strings.HasPrefix(l, "[") != (i == 0) {
			t.Errorf("line %d: only a tick's first line starts with [:\n%s", i+1, out)
		}
	}
	for _, name := range names {
		if !strings.Contains(out, " "+name+" 123k/s peak 2000M/1000M (+1000M) 12.3M errors p99 1.23s") {
			t.Errorf("%s is not whole in:\n%s", name, out)
		}
	}
	// The default two strategies, at the numbers of a default run, share one line.
	snap = bench.Snapshot{Elapsed: 3 * time.Second, Total: 10 * time.Second, Limit: 20, Strategies: []bench.StrategySnapshot{
		{Name: "naive", Throughput: 17_230, Errors: 3, Findings: fold.Findings{Peak: 64, Overshoot: 44}}, {Name: "lua", Throughput: 44_280, Findings: fold.Findings{Peak: 20}}}}
	if got := ProgressLine(snap); strings.Contains(got, "\n") || got != "[3s/10s] naive 17.2k/s peak 64/20 (+44) 3 errors p99 0 | lua 44.3k/s peak 20/20 p99 0" {
		t.Errorf("two strategies on more than one line:\n%s", got)
	}
}
