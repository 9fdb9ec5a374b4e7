package bench

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

func histOf(values ...int64) *hdrhistogram.Snapshot {
	h := hdrhistogram.New(histMin, histMax, histSigFigs)
	for _, v := range values {
		h.RecordValue(v)
	}
	return h.Export()
}

func TestMergeSumsCountsAndMergesHistograms(t *testing.T) {
	a := Summary{RunID: "r", Limiter: "concurrency", Limit: 5, Workers: 4, Duration: 2 * time.Second, Strategies: []StrategySnapshot{
		{Name: "lua", Attempts: 100, Admitted: 60, Rejected: 40, Contended: true, Histogram: histOf(100, 100, 100), Findings: fold.Findings{Peak: 5}},
	}}
	b := Summary{RunID: "r", Limiter: "concurrency", Limit: 5, Workers: 4, Duration: 3 * time.Second, Strategies: []StrategySnapshot{
		{Name: "lua", Attempts: 50, Admitted: 20, Rejected: 28, Errors: 2,
			ErrorsByKind: map[string]int64{"timeout": 2}, Histogram: histOf(9000), Findings: fold.Findings{Peak: 7, OvershootEvent: 3, Overshoot: 2}},
	}}
	m, err := Merge([]Summary{a, b})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Strategies[0]
	if m.Processes != 2 || m.Workers != 8 || m.Duration != 3*time.Second {
		t.Fatalf("run: %d processes, %d workers, %s; want 2, 8, 3s", m.Processes, m.Workers, m.Duration)
	}
	if s.Attempts != 150 || s.Admitted != 80 || s.Rejected != 68 || s.Errors != 2 || s.ErrorsByKind["timeout"] != 2 {
		t.Fatalf("counts not summed: %+v", s)
	}
	if s.Peak != 7 || s.Overshoot != 2 || s.OvershootEvent != 3 || !s.Contended {
		t.Fatalf("evidence: %+v", s)
	}
	// Four latencies, one of them 9ms: p50 from the 100µs ones, max the 9ms from the other process.
	if s.Latency.P50 != 100*time.Microsecond || s.Latency.Max < 8990*time.Microsecond {
		t.Fatalf("merged latency %+v, want p50 100µs and max ~9ms", s.Latency)
	}
	if _, err := Merge([]Summary{a, {RunID: "r", Limiter: "concurrency", Limit: 6}}); err == nil {
		t.Fatal("processes with different limits were merged")
	}
}

// Each process judges the refusals on its own keys: merged, the counts add up, the first is the
// earliest of the processes' firsts and the tightest the one with the least room; a process
// that judged none (it shared its keys) leaves the merged run unjudged.
func TestMergeAddsFalseRejects(t *testing.T) {
	one := func(n, held int64, sent float64) Summary {
		return Summary{Limiter: "concurrency", Limit: 20, Strategies: []StrategySnapshot{{Name: "custom",
			Findings: fold.Findings{Refusals: fold.Refusals{FalseRejects: n, FirstFalseReject: &refusal.FalseReject{SentMs: sent, HeldOrAdmitted: held, Limit: 20}, Tightest: &refusal.FalseReject{SentMs: sent + 1, HeldOrAdmitted: held, Limit: 20}}}}}}
	}
	m, err := Merge([]Summary{one(10, 3, 40), one(5, 12, 20)})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Strategies[0]
	if s.FalseRejects != 15 || s.FirstFalseReject.SentMs != 20 || s.Tightest.HeldOrAdmitted != 12 || s.RefusalsUnjudged != "" {
		t.Errorf("merged: %d false rejects, first %+v, tightest %+v, unjudged %q", s.FalseRejects, s.FirstFalseReject, s.Tightest, s.RefusalsUnjudged)
	}
	shared := Summary{Limiter: "concurrency", Limit: 20, Strategies: []StrategySnapshot{{Name: "custom", Findings: fold.Findings{Refusals: fold.Refusals{RefusalsUnjudged: RefusalsShared, NoRefusalJudged: true}}}}}
	if m, _ := Merge([]Summary{shared, shared}); m.Strategies[0].RefusalsUnjudged == "" || !m.Strategies[0].NoRefusalJudged {
		t.Error("processes that judged no refusal merged into a judged run")
	}
}

// Every process of a shared run reads the same keys as it finishes: a leak any of them saw
// stands in the merged run (the most any saw, with its samples), as does the largest key; a
// process that could not read them does not erase the others' reading.
func TestMergeKeepsTheLeaksAnyProcessSaw(t *testing.T) {
	seen := &Leaks{KeysWithoutTTL: 2, Samples: []KeyState{{Key: "rl:{r}:custom:exp", TTLMs: -1}}}
	a := Summary{RunID: "r", Limiter: "fixed-window", Limit: 5, Strategies: []StrategySnapshot{
		{Name: "custom", Leaks: &Leaks{}, LargestKey: &KeySize{Key: "rl:{r}:custom", Type: "zset", Size: 7}},
	}}
	b := Summary{RunID: "r", Limiter: "fixed-window", Limit: 5, Strategies: []StrategySnapshot{
		{Name: "custom", Leaks: seen, LargestKey: &KeySize{Key: "rl:{r}:custom", Type: "zset", Size: 3}},
	}}
	c := Summary{RunID: "r", Limiter: "fixed-window", Limit: 5, Strategies: []StrategySnapshot{
		{Name: "custom", LeftoversUnread: "could not read the run's keys: i/o timeout"},
	}}
	m, err := Merge([]Summary{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Strategies[0]
	if s.Leaks == nil || s.Leaks.KeysWithoutTTL != 2 || len(s.Leaks.Samples) != 1 || s.LeftoversUnread != "" {
		t.Errorf("leaks %+v, unread %q", s.Leaks, s.LeftoversUnread)
	}
	if s.LargestKey == nil || s.LargestKey.Size != 7 {
		t.Errorf("largest %+v", s.LargestKey)
	}
	if m, _ := Merge([]Summary{c}); m.Strategies[0].Leaks != nil || m.Strategies[0].LeftoversUnread == "" {
		t.Errorf("a run nobody read: %+v", m.Strategies[0])
	}
}
