package bucket

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// The bucket's lateness tiers: one request too many on time is proven by the first tier; several
// too many from slow calls by a wider one, with that tier's slack; a call later than every tier is
// no evidence.
func TestLateBucketTiers(t *testing.T) {
	cfg := overshoot.Limits{Limit: 20, Rate: 20, Skew: time.Millisecond}
	ev := Model.Clock(cfg, false)
	if want := []int64{28, 56, 112, 224}; len(ev.BucketTiers) != 4 || ev.BucketTiers[0] != want[0] || ev.BucketTiers[3] != want[3] || ev.LateMs != 224 {
		t.Fatalf("tiers %v, late %d; want %v", ev.BucketTiers, ev.LateMs, want)
	}
	start := int64(1_700_000_000_000)
	spec := overshoot.Spec{Model: Model, Limits: cfg, Clock: ev}
	onTime := Model.Checker(spec, 1000)
	for i := int64(0); i < 21; i++ {
		onTime.Admit(evidence.Decision{AtMs: start + i/8, LateUs: 3000}, func() {}) // 21 within 3ms, on time
	}
	if got := onTime.Finish(); got.Overshoot != 1 {
		t.Errorf("21 on time from a burst of 20: %+v, want overshoot 1", got)
	}
	slow := Model.Checker(spec, 1000)
	for i := int64(0); i < 21; i++ {
		slow.Admit(evidence.Decision{AtMs: start + i/8, LateUs: 80_000}, func() {}) // the same, each call 80ms late
	}
	if got := slow.Finish(); got.Overshoot != 0 {
		t.Errorf("21 admits 80ms late may be a correct bucket deciding them 80ms on (1.6 tokens): %+v", got)
	}
	for i := int64(0); i < 5; i++ {
		slow.Admit(evidence.Decision{AtMs: start + 3, LateUs: 80_000}, func() {})
	}
	// 26 within 3ms draw 25.94; beyond the burst and the 112ms tier's 2.24 tokens: 3.7, so 4.
	if got := slow.Finish(); got.Overshoot != 4 {
		t.Errorf("26 admits 80ms late: %+v, want overshoot 4", got)
	}
}
