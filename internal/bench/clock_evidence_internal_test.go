package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/redistest"
	"github.com/limitctl/limitctl/internal/trace"
)

// virtualLog is a sliding log fixture on the virtual clock (limit 20 per 1s) with the engine's
// evidence for it, and call, which sends one acquire stamped now and hands it to the evidence as
// the engine does, call by call, so a test builds its schedule exactly.
func virtualLog(t *testing.T, file string) (s *strategyState, call func(now time.Time) bool) {
	t.Helper()
	src, err := os.ReadFile("../../testdata/limiters/" + file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.Compile(contract.Spec{Args: "{limit} {window_ms} {member}", Allowed: "reply == 1", ReadsTime: true},
		limiter.DefaultContract(limiter.SlidingWindow))
	if err != nil {
		t.Fatal(err)
	}
	if c.Clock != contract.VirtualClock {
		t.Fatalf("clock %s, want virtual", c.Clock)
	}
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Custom, redistest.Start(t).Client(t),
		limiter.Config{Limit: 20, Window: time.Second, CustomSource: string(src), Contract: c})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Limiter: limiter.SlidingWindow, Limit: 20, Window: time.Second, Workers: 1, KeyCount: 1, Horizon: 5 * time.Second,
		Now: time.Now, KeyFor: func(string, int) string { return "t:{" + t.Name() + "}:custom:0" }}
	s = newStrategyState(cfg, StrategyRun{Name: "custom", Limiter: lim, MonotoneTime: true})
	s.begin = time.Now()
	s.beginMs = s.begin.UnixMilli()
	s.recorders = []*trace.Recorder{trace.NewRecorder(s.begin, 0, 1, true)}
	ctx := context.Background()
	return s, func(now time.Time) bool {
		t.Helper()
		dc := decisionCall{now: now}
		s.stamping(&dc)
		dc.sent(s, time.Now(), time.Time{})
		d, err := lim.Acquire(ctx, s.keys[0], dc.now)
		if err != nil {
			t.Fatal(err)
		}
		s.settle(ctx, &dc, d, nil, time.Now())
		return d.Allowed
	}
}

// On the virtual clock TIME is the hammer's but a TTL runs on the server's clock. A sliding log
// correct on the server's clock (sliding_log_server_time.lua, PEXPIRE of one window) admits 20
// requests stamped together; 20 stamped 990ms later that reach Redis more than a window after
// them in real time (stamped, then stalled on a busy machine) find the log expired and are
// admitted too; and 20 stamped 1991ms in, when the second batch is out of the window, are
// admitted on time. 40 admits within one window of TIME, but not of the real clock; 60 within
// two windows of both, in three pieces the order they ran in crosses. Neither is evidence
// against the limiter, which is exact. The schedule is built call by call against the real script.
func TestVirtualClockSlidingLogExpiringInRealTimeIsNoOvershoot(t *testing.T) {
	s, call := virtualLog(t, "sliding_log_server_time.lua")
	batch := func(now time.Time) {
		t.Helper()
		for i := 0; i < 20; i++ {
			if !call(now) {
				t.Fatalf("request %d of the batch stamped %s in refused: not the schedule this test builds", i+1, now.Sub(s.begin))
			}
		}
	}
	first := time.Now().Truncate(time.Millisecond)
	batch(first)
	lastRan := time.Now()
	time.Sleep(time.Second + 20*time.Millisecond) // the log's PEXPIRE of one window has run out
	if time.Since(lastRan) <= time.Second {
		t.Fatalf("slept %s, not past the log's TTL", time.Since(lastRan))
	}
	batch(first.Add(990 * time.Millisecond))
	time.Sleep(time.Until(first.Add(1991 * time.Millisecond)))
	batch(first.Add(1991 * time.Millisecond))
	got := s.evidence.Key(0).Finish()
	t.Logf("20 admits stamped at +0, 20 at +990ms run more than a window later, 20 at +1991ms: %+v", got)
	if got.Overshoot != 0 {
		t.Errorf("a correct sliding log blamed for a TTL that ran out in real time: overshoot %d (peak %d)", got.Overshoot, got.Peak)
	}
}

// The same evidence still catches a log one request too generous: 21 admits stamped together.
func TestVirtualClockSlidingLogOneTooManyIsCaught(t *testing.T) {
	s, call := virtualLog(t, "buggy/sliding_log_server_time_one_too_many.lua")
	now := time.Now()
	for i := 0; i < 21; i++ {
		if !call(now) {
			t.Fatalf("request %d refused: the fixture admits 21", i+1)
		}
	}
	if got := s.evidence.Key(0).Finish(); got.Overshoot != 1 || got.Peak != 21 {
		t.Errorf("21 admits stamped together on a limit of 20: %+v, want overshoot 1 (peak 21)", got)
	}
}
