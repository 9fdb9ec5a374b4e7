package fold

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/kind/held"
	"github.com/limitctl/limitctl/internal/evidence/kind/sliding"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/trace"
)

const ms = int64(1000)

// The fold takes each key's worst and adds up their events: key 0 admits 3 in a window of a
// limit of 2, key 1 2; the strategy proved an overshoot of 1, once, and states its power.
func TestFoldTakesTheWorstKeyAndAddsUpTheEvents(t *testing.T) {
	s := New(2, false)
	spec := overshoot.Spec{Model: sliding.Model, Limits: overshoot.Limits{Limit: 2, Window: time.Second},
		Clock: overshoot.Clock{Aligned: true}, Horizon: time.Second}
	for key, admits := range []int{3, 2} {
		s.AddKey(spec)
		for i := range admits {
			s.Key(key).Admit(evidence.Decision{Key: int32(key), AtMs: 1_700_000_000_000 + int64(i)}, func() {})
		}
	}
	var f Findings
	s.Fold(&f, Final)
	if f.Peak != 3 || f.Overshoot != 1 || f.OvershootEvent != 1 || f.CaughtFrom == nil {
		t.Fatalf("findings %+v, want a peak of 3, an overshoot of 1 once, a power", f)
	}
	var live Findings
	s.Fold(&live, Live)
	if live.CaughtFrom != nil {
		t.Errorf("a live fold measured the power: %d", *live.CaughtFrom)
	}
}

// The refusals of every key add up; the first false reject is the earliest of any key's, with
// its request looked up once, while the source still keeps it; the tightest is the one with the
// least room.
func TestFoldedRefusalsNameTheEarliestAndTheTightest(t *testing.T) {
	spec := refusal.Spec{Kind: "concurrency", Model: held.Model, Limit: 3, StaleAfter: 100 * ms, Horizon: 5000 * ms}
	s := NewRefusals(spec, 2)
	lookups := 0
	s.request = func(id uint64) *trace.Request {
		lookups++
		return &trace.Request{ID: trace.RequestID(id)}
	}
	refused := func(key int32, id uint64, sent int64) evidence.Decision {
		return evidence.Decision{ID: id, Key: key, SentUs: sent, RepliedUs: sent + ms, ClockLoUs: sent, ClockHiUs: sent, Outcome: evidence.Refused}
	}
	held := evidence.Decision{ID: 1, Key: 1, SentUs: 0, RepliedUs: ms, ClockLoUs: 0, ClockHiUs: 0, Outcome: evidence.Admitted,
		ReleasedUs: 50 * ms, ReleaseOK: true}
	for _, d := range []evidence.Decision{held, refused(0, 2, 20*ms), refused(1, 3, 10*ms)} {
		s.Record(d)
	}
	s.JudgeBefore(refusal.Forever, 0)
	s.JudgeBefore(refusal.Forever, 0) // nothing new: looked up once
	var r Refusals
	s.FoldRefusals(&r)
	switch {
	case r.FalseRejects != 2:
		t.Fatalf("%d false rejects, want 2", r.FalseRejects)
	case r.FirstFalseReject.ID != 3 || r.FirstFalseReject.Request == nil || lookups != 1:
		t.Errorf("first %+v after %d lookups, want call 3 with its request, looked up once", r.FirstFalseReject, lookups)
	case r.Tightest.HeldOrAdmitted != 1:
		t.Errorf("tightest %+v, want the one with a request held beside it", r.Tightest)
	}
}

// kept is a source's admits, each its request.
type kept []Admit

func (k kept) Admits(match func(*Admit) bool) (found []Admit, requests []trace.Request, omitted int64) {
	for _, a := range k {
		if match(&a) {
			found = append(found, a)
			requests = append(requests, trace.Request{ID: trace.RequestID(a.ID)})
		}
	}
	return found, requests, 0
}

// A first overshoot is told as the admits the source still keeps: held requests by id, the
// instant the one that went over was answered, and how many are no longer kept.
func TestExplainTellsTheAdmitsStillKept(t *testing.T) {
	src := kept{{ID: 1, RepliedUs: 3000}, {ID: 2, RepliedUs: 7000}, {ID: 9, RepliedUs: 9000}}
	ov := Explain{Limit: 2}.Overshoot(0, overshoot.Moment{Count: 3, Held: []uint64{1, 2, 4}, By: 2}, src)
	if *ov.Held != 3 || ov.AtMs != 7 || ov.Missing != 1 || len(ov.Requests) != 2 {
		t.Fatalf("held %d at %vms, %d missing, %d requests; want 3 at 7ms, 1 missing, 2 requests", *ov.Held, ov.AtMs, ov.Missing, len(ov.Requests))
	}
	// Admits in a window of the stamps: those of its key stamped in it, from the run's start.
	src = kept{{ID: 1, Key: 0, AtMs: 1005}, {ID: 2, Key: 1, AtMs: 1006}, {ID: 3, Key: 0, AtMs: 1400}}
	ov = Explain{Limit: 1, BeginMs: 1000}.Overshoot(0, overshoot.Moment{Count: 2, FromMs: 1000, ToMs: 1010}, src)
	if *ov.InWindow != 2 || *ov.FromMs != 0 || *ov.ToMs != 10 || len(ov.Requests) != 1 || ov.Missing != 1 {
		t.Fatalf("%+v: want 2 in [0, 10]ms, one kept, one missing", ov)
	}
}
