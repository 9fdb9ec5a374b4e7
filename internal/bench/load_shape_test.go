package bench

import (
	"testing"
	"time"
)

func TestActiveLoadLeavesOutIdleSpells(t *testing.T) {
	s := time.Second
	cases := []struct {
		profile string
		d, want time.Duration
	}{
		{ProfileSteady, 10 * s, 10 * s},
		{ProfileBursty, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{ProfileBursty, 3 * s, 2 * s},                   // 2 windows of load, then idle
		{ProfileBursty, 5 * s, 3500 * time.Millisecond}, // and 1.5 of the next burst
		{ProfileBursty, 10 * s, 6 * s},                  // two cycles of 3.5s, then 2s of load and 1s idle
	}
	for _, c := range cases {
		if got := ActiveLoad(c.profile, s, c.d); got != c.want {
			t.Errorf("%s over %s: %s, want %s", c.profile, c.d, got, c.want)
		}
	}
}
