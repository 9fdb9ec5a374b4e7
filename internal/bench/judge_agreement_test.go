package bench_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/hammer/recordfile"
	"github.com/limitctl/limitctl/internal/judge"
	"github.com/limitctl/limitctl/internal/limiter"
)

// A recorded run (hammer --record) judged again by limitctl judge reads the verdict the run gave
// itself: the same evidence, told the same calls, by the same rules. Every power run records its
// calls and checks it (make verify-power); a few fixtures of each verdict check it always.

// recordRun has cfg's run record its calls into a file of the test's; done closes it and
// returns its path.
func recordRun(t *testing.T, cfg *bench.Config) (done func() string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := recordfile.Open(path, *cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Recorder = rec
	return func() string {
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// judgeAgrees judges the recorded run at path and fails the test unless it reads the run's
// own verdict on st (what the keys left behind, LEAKS, is read from Redis, not recorded).
func judgeAgrees(t *testing.T, path string, st bench.StrategySnapshot, kind limiter.Kind, d time.Duration) {
	t.Helper()
	res, err := judge.Run(context.Background(), judge.Options{Files: []string{path}})
	if err != nil {
		t.Fatalf("judge %s: %v", path, err)
	}
	word := func(v verdict.Verdict) string {
		w, _, _ := strings.Cut(v.Word, ", "+verdict.Leaks)
		if w == verdict.Leaks {
			return "" // leaks alone: the limit's side proved nothing either way, as judge reads it
		}
		return w
	}
	ran := verdict.Judge(st, kind, 20, d)
	if len(res.Verdicts) != 1 {
		t.Fatalf("judge %s: %d verdicts", path, len(res.Verdicts))
	}
	got := res.Verdicts[0]
	if word(got) != word(ran) && !(word(ran) == "" && got.Word == verdict.NotJudged) {
		t.Errorf("judge %s read %s (%s); the run read %s (%s)", path, got.Word, got.Text, ran.Word, ran.Text)
	}
}

func TestJudgeOfARecordedRunReadsTheRunsVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("hammers a script per verdict for 2s each")
	}
	srv := startPowerTarget(t)
	for _, c := range []powerCase{buggyScripts[0], buggyScripts[1], strictScripts[1], correctScripts()[0], correctScripts()[3]} {
		t.Run(fixtureName(c.file, c.spec), func(t *testing.T) {
			st, _ := powerRunRecorded(t, srv, c, 2*time.Second, false, func(s bench.StrategySnapshot) bool { return false })
			t.Logf("%s: %s", c.file, verdict.Judge(st, c.kind, 20, 2*time.Second).Word)
		})
	}
}
