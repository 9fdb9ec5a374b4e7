package bench

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// A scheduled admit is stamped at its slot floored to the ms; the lateness carries the floor's
// remainder and, for a slot before the call's now, how far before; the wait is bounded.
func TestAdmitAtEvidence(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	late := 3 * time.Millisecond
	for _, tc := range []struct {
		name      string
		at        time.Time
		stamp     time.Time
		late, due time.Duration
	}{
		{"a slot later", now.Add(250 * time.Millisecond), now.Add(250 * time.Millisecond), late, 250 * time.Millisecond},
		{"a fractional slot", now.Add(10*time.Millisecond + 600*time.Microsecond), now.Add(10 * time.Millisecond), late + 600*time.Microsecond, 10*time.Millisecond + 600*time.Microsecond},
		{"a slot in the past", now.Add(-40 * time.Millisecond), now.Add(-40 * time.Millisecond), late + 40*time.Millisecond, 0},
		{"a slot far ahead", now.Add(time.Hour), now.Add(time.Hour), late, MaxAdmitWait},
		{"now", now, now, late, 0},
	} {
		stamp, gotLate, wait := admitAtEvidence(now, tc.at, late)
		if !stamp.Equal(tc.stamp) || gotLate != tc.late || wait != tc.due {
			t.Errorf("%s: stamp %v late %v wait %v; want %v %v %v", tc.name, stamp.UnixMilli(), gotLate, wait, tc.stamp.UnixMilli(), tc.late, tc.due)
		}
	}
}

// A correct schedule whose slots lie off the ms grid (a window and 90µs apart, one admit per
// window) is judged exact on its floored stamps, and the same schedule a window less 90µs apart
// is caught once the drift crosses a whole ms.
func TestFlooredSlotsKeepTheWindow(t *testing.T) {
	c := overshoot.NewSlidingChecker(1, 100, 10_000, false)
	base := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 50; i++ {
		at := base.Add(time.Duration(i) * (100*time.Millisecond + 90*time.Microsecond))
		stamp, _, _ := admitAtEvidence(at, at, 0)
		c.AdmitMs(stamp.UnixMilli())
	}
	if r := c.Finish(); r.Overshoot != 0 {
		t.Errorf("slots a window and 90µs apart: overshoot %d", r.Overshoot)
	}
	c = overshoot.NewSlidingChecker(1, 100, 10_000, false)
	for i := 0; i < 50; i++ {
		at := base.Add(time.Duration(i) * (100*time.Millisecond - 90*time.Microsecond))
		stamp, _, _ := admitAtEvidence(at, at, 0)
		c.AdmitMs(stamp.UnixMilli())
	}
	if r := c.Finish(); r.Overshoot == 0 {
		t.Error("slots a window less 90µs apart: no overshoot")
	}
}
