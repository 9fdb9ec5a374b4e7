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

// On the virtual clock TIME is the hammer's but a TTL runs on the server's clock: a sliding log
// correct on the server's clock (testdata/limiters/sliding_log_server_time.lua, PEXPIRE of one
// window) admits a limit of requests stamped together, and a call stamped less than a window
// later that reaches Redis more than a window after them (stamped, then stalled on a busy
// machine) finds the log expired and is admitted too. Its stamp puts the limit and one in one
// window of the virtual clock, but the calls ran more than a window apart in real time: that is
// no evidence against the limiter, which is exact. The schedule is built call by call against
// the real script, so the run is the same every time.
func TestVirtualClockSlidingLogExpiringInRealTimeIsNoOvershoot(t *testing.T) {
	src, err := os.ReadFile("../../testdata/limiters/sliding_log_server_time.lua")
	if err != nil {
		t.Fatal(err)
	}
	const limit, window = 20, time.Second
	c, err := contract.Compile(contract.Spec{Args: "{limit} {window_ms} {member}", Allowed: "reply == 1", ReadsTime: true},
		limiter.DefaultContract(limiter.SlidingWindow))
	if err != nil {
		t.Fatal(err)
	}
	if c.Clock != contract.VirtualClock {
		t.Fatalf("clock %s, want virtual", c.Clock)
	}
	srv := redistest.Start(t)
	lim, err := limiter.New(limiter.SlidingWindow, limiter.Custom, srv.Client(t), limiter.Config{Limit: limit, Window: window, CustomSource: string(src), Contract: c})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Limiter: limiter.SlidingWindow, Limit: limit, Window: window, Workers: 1, KeyCount: 1, Horizon: 5 * time.Second,
		Now: time.Now, KeyFor: func(string, int) string { return "t:{vclock-ttl}:custom:0" }}
	s := newStrategyState(cfg, StrategyRun{Name: "custom", Limiter: lim, MonotoneTime: true})
	s.begin = time.Now()
	s.beginMs = s.begin.UnixMilli()
	s.recorders = []*trace.Recorder{trace.NewRecorder(s.begin, 0, 1, true)}
	ctx := context.Background()

	// call sends one acquire stamped now and hands it to the evidence as the engine does.
	call := func(now time.Time) bool {
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
	first := time.Now()
	for i := 0; i < limit; i++ {
		if !call(first) {
			t.Fatalf("request %d of the first %d refused", i+1, limit)
		}
	}
	lastRan := time.Now()
	time.Sleep(window + 20*time.Millisecond) // the log's PEXPIRE of one window has run out
	late := first.Add(window - 10*time.Millisecond)
	if time.Since(lastRan) <= window {
		t.Fatalf("slept %s, not past the log's TTL", time.Since(lastRan))
	}
	if !call(late) {
		t.Fatalf("the late call was refused: the log did not expire in real time (not the schedule this test builds)")
	}
	got := s.checkers[0].Finish()
	t.Logf("%d admits stamped at +0, one stamped at +%s that ran %s later in real time: %+v", limit, late.Sub(first), window+20*time.Millisecond, got)
	if got.Overshoot != 0 {
		t.Errorf("a correct sliding log blamed for a TTL that ran out in real time: overshoot %d (peak %d)", got.Overshoot, got.Peak)
	}
}
