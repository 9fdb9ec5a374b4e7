package bench

import (
	"github.com/limitctl/limitctl/internal/limiter"
	"testing"
	"time"
)

// A call is judged at the time its script could know, and is late by what a newer clock could
// have shown that script: to the millisecond, its stamp's rounding and the whole delay; in whole
// seconds, nothing unless a second turned.
func TestEvidenceStampAndLateness(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_400).Add(300 * time.Microsecond)
	ms := StrategyRun{}
	if got := evidenceStamp(ms, now); got != time.UnixMilli(1_700_000_000_400) {
		t.Errorf("stamp %v", got)
	}
	if got := evidenceLateness(ms, now, 5*time.Millisecond); got != 5300*time.Microsecond {
		t.Errorf("millisecond lateness %s, want 5.3ms", got)
	}
	sec := StrategyRun{TimeQuantum: time.Second}
	if got := evidenceStamp(sec, now); got != time.Unix(1_700_000_000, 0) {
		t.Errorf("whole-second stamp %v", got)
	}
	if got := evidenceLateness(sec, now, 5*time.Millisecond); got != 0 {
		t.Errorf("5ms within one second: late by %s, want 0", got)
	}
	if got := evidenceLateness(sec, now, 700*time.Millisecond); got != time.Second {
		t.Errorf("a second turned: late by %s, want 1s", got)
	}
}

// The bucket's lateness tiers: one request too many on time is proven by the first tier; several
// too many from slow calls by a wider one, with that tier's slack; a call later than every tier is
// no evidence.
func TestLateBucketTiers(t *testing.T) {
	cfg := Config{Limiter: "token-bucket", Limit: 20, Rate: 20, Skew: time.Millisecond}
	ev := evidenceFor(cfg, StrategyRun{})
	if want := []int64{28, 56, 112, 224}; len(ev.bucketTiers) != 4 || ev.bucketTiers[0] != want[0] || ev.bucketTiers[3] != want[3] || ev.lateMs != 224 {
		t.Fatalf("tiers %v, late %d; want %v", ev.bucketTiers, ev.lateMs, want)
	}
	start := int64(1_700_000_000_000)
	onTime := clientChecker(cfg, ev, 1000).(*lateBucket)
	for i := int64(0); i < 21; i++ {
		onTime.AdmitLate(start+i/8, 3*time.Millisecond) // 21 within 3ms, on time
	}
	if got := onTime.Finish(); got.Overshoot != 1 {
		t.Errorf("21 on time from a burst of 20: %+v, want overshoot 1", got)
	}
	slow := clientChecker(cfg, ev, 1000).(*lateBucket)
	for i := int64(0); i < 21; i++ {
		slow.AdmitLate(start+i/8, 80*time.Millisecond) // the same, each call 80ms late
	}
	if got := slow.Finish(); got.Overshoot != 0 {
		t.Errorf("21 admits 80ms late may be a correct bucket deciding them 80ms on (1.6 tokens): %+v", got)
	}
	for i := int64(0); i < 5; i++ {
		slow.AdmitLate(start+3, 80*time.Millisecond)
	}
	// 26 within 3ms draw 25.94; beyond the burst and the 112ms tier's 2.24 tokens: 3.7, so 4.
	if got := slow.Finish(); got.Overshoot != 4 {
		t.Errorf("26 admits 80ms late: %+v, want overshoot 4", got)
	}
}

// On the monotone virtual clock a call's TIME lies in [StampLo, StampHi]: an admit stamped at the
// end of one epoch-aligned window may have been answered a TIME in the next, so the refusal
// judge counts it there (by the sliding bound, which holds for every alignment), and blames a
// refusal only when no admit can have been in its window.
func TestMonotoneRefusalsOfAnAlignedWindow(t *testing.T) {
	spec := window(limiter.FixedWindow, 1)
	spec.aligned = true
	straddling := judgedCall{Sent: 99 * ms, Replied: 101 * ms, StampLo: 99 * ms, StampHi: 101 * ms, Outcome: outAdmitted}
	refused := at(150*ms, 151*ms, outRefused)
	if r := judgeOnce(spec, straddling, refused); r.count != 1 {
		t.Fatalf("the aligned rule reads the admit's window from its stamp alone: want it blamed here, got %d", r.count)
	}
	spec.monotone = true
	if r := judgeOnce(spec, straddling, refused); r.count != 0 {
		t.Errorf("an admit that may have read a TIME in the refusal's window was not counted")
	}
	if r := judgeOnce(spec, at(0, 1*ms, outAdmitted), refused); r.count != 1 {
		t.Errorf("an admit certainly a window before the refusal counted on the monotone clock")
	}
}
