package overshoot

import (
	"testing"
	"time"
)

// A call is judged at the time its script could know, and is late by what a newer clock could
// have shown that script: to the millisecond, its stamp's rounding and the whole delay; in whole
// seconds, nothing unless a second turned.
func TestEvidenceStampAndLateness(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_400).Add(300 * time.Microsecond)
	ms := time.Duration(0)
	if got := Stamp(ms, now); got != time.UnixMilli(1_700_000_000_400) {
		t.Errorf("stamp %v", got)
	}
	if got := Lateness(ms, now, 5*time.Millisecond); got != 5300*time.Microsecond {
		t.Errorf("millisecond lateness %s, want 5.3ms", got)
	}
	sec := time.Second
	if got := Stamp(sec, now); got != time.Unix(1_700_000_000, 0) {
		t.Errorf("whole-second stamp %v", got)
	}
	if got := Lateness(sec, now, 5*time.Millisecond); got != 0 {
		t.Errorf("5ms within one second: late by %s, want 0", got)
	}
	if got := Lateness(sec, now, 700*time.Millisecond); got != time.Second {
		t.Errorf("a second turned: late by %s, want 1s", got)
	}
}
