package bench

import (
	"slices"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/limiter"
)

// Each worker abandons its share of its admits exactly, evenly spaced, from a phase of its own.
func TestAbandonsAreEvenlySpacedPerWorker(t *testing.T) {
	s := newStrategyState(Config{Abandon: 0.25, Workers: 8, KeyCount: 1, KeyFor: func(string, int) string { return "k" },
		Limiter: limiter.Concurrency, Limit: 1}, StrategyRun{Name: "lua"})
	firsts := map[int]bool{}
	for w := 0; w < 8; w++ {
		var at []int
		for i := 0; i < 400; i++ {
			if s.abandons(w) {
				at = append(at, i)
			}
		}
		if len(at) < 99 || len(at) > 100 {
			t.Fatalf("worker %d abandoned %d of 400 admits, want 100", w, len(at))
		}
		for i := 1; i < len(at); i++ {
			if at[i]-at[i-1] != 4 {
				t.Fatalf("worker %d: abandons at %v, not every 4th", w, at[:min(len(at), 10)])
			}
		}
		firsts[at[0]] = true
	}
	if len(firsts) < 3 {
		t.Errorf("the workers' first abandons fall on %d admits of 4: not spread", len(firsts))
	}
	if s := newStrategyState(Config{Workers: 1, KeyCount: 1, KeyFor: func(string, int) string { return "k" }, Limiter: limiter.Concurrency, Limit: 1},
		StrategyRun{Name: "lua"}); s.abandons(0) {
		t.Error("abandoned with Abandon 0")
	}
}

// A crash abandons the next Size admits together, whichever workers make them, once it is due: the
// first a sixth of its period into the run (at most half a second), then one every period.
func TestCrashesAbandonSeveralAdmitsTogether(t *testing.T) {
	s := newStrategyState(Config{Crashes: Crashes{Every: 60 * time.Millisecond, Size: 3}, Workers: 4, KeyCount: 1,
		KeyFor: func(string, int) string { return "k" }, Limiter: limiter.Concurrency, Limit: 5}, StrategyRun{Name: "lua"})
	s.begin = time.Now()
	if s.abandons(0) {
		t.Fatal("abandoned before the first crash was due")
	}
	for time.Since(s.begin) < 10*time.Millisecond {
		time.Sleep(time.Millisecond) // the clock the schedule reads, not a wait for another goroutine
	}
	var got []bool
	for i := 0; i < 5; i++ {
		got = append(got, s.abandons(i%4))
	}
	if want := []bool{true, true, true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("admits after the first crash: %v, want the next 3 abandoned, then none", got)
	}
	for time.Since(s.begin) < 70*time.Millisecond {
		time.Sleep(time.Millisecond)
	}
	n := 0
	for i := 0; i < 10; i++ {
		if s.abandons(i % 4) {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("the second crash abandoned %d admits, want 3", n)
	}
}
