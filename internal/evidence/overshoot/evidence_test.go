package overshoot_test

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/kind/fixed"
	"github.com/limitctl/limitctl/internal/evidence/kind/held"
	"github.com/limitctl/limitctl/internal/evidence/kind/sliding"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// Six admits per window for two windows, limit 5, on a fixed window of unknown alignment: proven
// only when the spec anchors windows at their openers, and not when an unjudged call a window
// before may have opened one (TestAnchoredWindowsProveOneTooManySooner). Where they are only
// noted, the power of anchored windows is still stated; where the openers are not seen, it is not.
func TestEvidenceAnchorsWindowsOnlyWhenTheSpecSaysSo(t *testing.T) {
	start := int64(1_700_000_000_000)
	judge := func(seen, anchor bool, unjudgedAt int64) *overshoot.Evidence {
		ev := overshoot.NewEvidence(overshoot.Spec{Model: fixed.Model, Limits: overshoot.Limits{Limit: 5, Window: time.Second},
			Clock: overshoot.Clock{LateMs: 10}, Horizon: 4 * time.Second, OpenersSeen: seen, AnchorAtOpeners: anchor})
		if unjudgedAt != 0 {
			ev.Unjudged(evidence.Decision{AtMs: unjudgedAt, LateUs: -1})
		}
		for w := int64(0); w < 2; w++ {
			for i := int64(0); i < 6; i++ {
				if got := ev.Admit(evidence.Decision{AtMs: start + w*1001 + i}, func() {}); got != overshoot.Judged {
					t.Fatalf("an admit on time: %d, want Judged", got)
				}
			}
		}
		return ev
	}
	if got := judge(true, true, 0).Finish(); got.Overshoot == 0 {
		t.Errorf("anchored: %+v, want an overshoot", got)
	}
	if got := judge(true, true, start-990).Finish(); got.Overshoot != 0 {
		t.Errorf("anchored, an unjudged call a window before: %+v, want none proven", got)
	}
	noted := judge(true, false, 0)
	if got := noted.Finish(); got.Overshoot != 0 {
		t.Errorf("openers noted, not anchored: %+v, want none proven", got)
	}
	if _, ok := noted.CaughtFromAnchored(10); !ok {
		t.Error("openers noted: no power stated for anchored windows")
	}
	unseen := judge(false, true, 0)
	if got := unseen.Finish(); got.Overshoot != 0 {
		t.Errorf("openers unseen: %+v, want none proven (never anchored)", got)
	}
	if k, ok := unseen.CaughtFromAnchored(10); ok {
		t.Errorf("openers unseen: anchored power %d stated", k)
	}
}

// An admit that reached the limiter a window or more after its stamp is no evidence: it is not
// kept, not judged, and counted as unjudged.
func TestEvidenceLeavesOutAnAdmitAWindowLate(t *testing.T) {
	ev := overshoot.NewEvidence(overshoot.Spec{Model: sliding.Model, Limits: overshoot.Limits{Limit: 1, Window: 100 * time.Millisecond},
		Clock: overshoot.Clock{Aligned: true}, Horizon: time.Second})
	start := int64(1_700_000_000_000)
	ev.Admit(evidence.Decision{AtMs: start}, func() {})
	kept := false
	if got := ev.Admit(evidence.Decision{AtMs: start + 1, LateUs: 100_000}, func() { kept = true }); got != overshoot.TooLate || kept {
		t.Fatalf("an admit a window late: %d (kept %v), want overshoot.TooLate and not kept", got, kept)
	}
	if got := ev.Finish(); got.Overshoot != 0 || got.Unjudged != 1 {
		t.Errorf("one admit on time and one a window late, limit 1: %+v, want no overshoot and 1 unjudged", got)
	}
}

// The witness counts an abandoned admit as held, and a released one no more; each admit is kept
// before the witness can name it behind the first overshoot.
func TestEvidenceHoldsAnAbandonedAdmit(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		keptSecond := false
		ev := overshoot.NewEvidence(overshoot.Spec{Model: held.Model, Limits: overshoot.Limits{Limit: 1}, Now: time.Now,
			OnFirstOver: func(m overshoot.Moment) {
				if !keptSecond {
					t.Errorf("the first overshoot (%+v) was found before its admit was kept", m)
				}
			}})
		now := time.Now()
		ev.Admit(evidence.Decision{ID: 1, NowUs: now.UnixMicro(), Abandoned: abandon}, func() {})
		ev.Release(1)
		ev.Admit(evidence.Decision{ID: 2, NowUs: now.UnixMicro()}, func() { keptSecond = true })
		want := int64(0)
		if abandon {
			want = 1 // the abandoned request still holds its slot
		}
		if got := ev.Finish(); got.Overshoot != want {
			t.Errorf("abandoned %v, then released, another admitted, limit 1: %+v, want overshoot %d", abandon, got, want)
		}
	}
}

// On the server's clock an admit is judged over its call's interval: one slower than the
// shortest span is left out and not kept, a quick one is judged and kept.
func TestEvidenceOnTheServerClockKeepsOnlyWhatItJudges(t *testing.T) {
	ev := overshoot.NewEvidence(overshoot.Spec{Model: sliding.Model, Limits: overshoot.Limits{Limit: 1, Window: 100 * time.Millisecond},
		Timing: overshoot.OnServerClock})
	kept := false
	if got := ev.Admit(evidence.Decision{SentUs: 0, RepliedUs: 100_000}, func() { kept = true }); got != overshoot.LeftOut || kept {
		t.Errorf("a call a window long: %d (kept %v), want overshoot.LeftOut and not kept", got, kept)
	}
	if got := ev.Admit(evidence.Decision{SentUs: 200_000, RepliedUs: 201_000}, func() { kept = true }); got != overshoot.Judged || !kept {
		t.Errorf("a call of 1ms: %d (kept %v), want overshoot.Judged and kept", got, kept)
	}
	if got := ev.Finish(); got.Unjudged != 1 {
		t.Errorf("one call left out: %+v, want 1 unjudged", got)
	}
}
