package bench_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/limiter"
)

// scriptedLimiter answers from a function of the call number: no Redis needed to test what
// the engine makes of the answers.
type scriptedLimiter struct {
	calls  atomic.Int64
	answer func(n int64) (limiter.Decision, error)
}

func (l *scriptedLimiter) Acquire(context.Context, string, time.Time) (limiter.Decision, error) {
	return l.answer(l.calls.Add(1))
}

func (l *scriptedLimiter) Release(context.Context, string, limiter.Decision) error { return nil }

func runScripted(t *testing.T, k limiter.Kind, limit int64, answer func(n int64) (limiter.Decision, error)) bench.StrategySnapshot {
	t.Helper()
	cfg := bench.Config{
		RunID: "ev", Limiter: k, Limit: limit, Window: time.Second, Rate: float64(limit), Workers: 1,
		Requests: 100, KeyCount: 1, Horizon: time.Second,
		KeyFor:     func(s string, i int) string { return "ev:" + s },
		Strategies: []bench.StrategyRun{{Name: "s", Limiter: &scriptedLimiter{answer: answer}}},
	}
	sum, err := bench.New(cfg).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Strategies[0]
}

func TestContendedNeedsTheLimitReached(t *testing.T) {
	admit := func(int64) (limiter.Decision, error) { return limiter.Decision{Allowed: true}, nil }
	// One worker, one in flight at a time, limit 5: never reached.
	if st := runScripted(t, limiter.Concurrency, 5, admit); st.Contended || st.Overshoot != 0 {
		t.Errorf("one worker under limit 5: contended %v overshoot %d, want not contended", st.Contended, st.Overshoot)
	}
	// Limit 1: the witness reaches it with every admit.
	if st := runScripted(t, limiter.Concurrency, 1, admit); !st.Contended {
		t.Errorf("limit 1 held by every admit: not contended (peak %d)", st.Peak)
	}
	// A rejection by the limiter is the limit reached, whatever the witness saw.
	rejectOnce := func(n int64) (limiter.Decision, error) { return limiter.Decision{Allowed: n != 50}, nil }
	if st := runScripted(t, limiter.Concurrency, 5, rejectOnce); !st.Contended || st.Rejected != 1 {
		t.Errorf("one rejection: contended %v rejected %d", st.Contended, st.Rejected)
	}
	// A window limiter whose window count reaches the limit: 100 admits in well under a second.
	if st := runScripted(t, limiter.SlidingWindow, 100, admit); !st.Contended || st.Peak != 100 {
		t.Errorf("100 admits in one window of limit 100: contended %v peak %d", st.Contended, st.Peak)
	}
	if st := runScripted(t, limiter.SlidingWindow, 1000, admit); st.Contended {
		t.Errorf("100 admits under a limit of 1000: contended (peak %d)", st.Peak)
	}
}

func TestErrorSamplesAreBoundedDistinctAndTrimmed(t *testing.T) {
	long := strings.Repeat("x", 500)
	st := runScripted(t, limiter.Concurrency, 5, func(n int64) (limiter.Decision, error) {
		switch {
		case n%2 == 0:
			return limiter.Decision{}, errors.New("ERR boom\nsecond line")
		case n == 1:
			return limiter.Decision{}, errors.New(long)
		default:
			return limiter.Decision{}, fmt.Errorf("ERR distinct %d", n) // more distinct messages than are kept
		}
	})
	if st.Errors != 100 {
		t.Fatalf("errors %d, want 100", st.Errors)
	}
	if len(st.ErrorSamples) != bench.MaxErrorSamples {
		t.Fatalf("%d samples, want %d: %+v", len(st.ErrorSamples), bench.MaxErrorSamples, st.ErrorSamples)
	}
	if s := st.ErrorSamples[0]; len(s.Message) > bench.MaxErrorMessage+3 || !strings.HasSuffix(s.Message, "...") || s.Count != 1 {
		t.Errorf("long message kept as %d bytes (%q...), count %d", len(s.Message), s.Message[:10], s.Count)
	}
	if s := st.ErrorSamples[1]; s.Message != "ERR boom" || s.Count != 50 {
		t.Errorf("second sample %+v, want ERR boom (first line) 50 times", s)
	}
}

func TestLateAdmitsAreCountedAsUnjudged(t *testing.T) {
	c := overshoot.NewSlidingChecker(10, 1000, 100, false)
	c.AdmitMs(1_700_000_010_000)
	c.AdmitMs(1_700_000_005_000) // far behind the newest: its window is already judged
	if got := c.Finish(); got.Unjudged != 1 || got.Peak != 1 {
		t.Errorf("sliding: %+v, want 1 unjudged and peak 1", got)
	}
	b := overshoot.NewBucketChecker(10, 10, 1, 100)
	b.AdmitMs(1_700_000_010_000)
	b.AdmitMs(1_700_000_005_000)
	if got := b.Finish(); got.Unjudged != 1 {
		t.Errorf("bucket: %+v, want 1 unjudged", got)
	}
}
