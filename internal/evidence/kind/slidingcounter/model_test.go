package slidingcounter

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// asPipeline is a simulated decision as the pipeline carries it: its clock's bounds, and its run
// bounds as the interval it was sent and answered in (and for a stamped one how late).
func asPipeline(d decision) evidence.Decision {
	out := evidence.Decision{ClockLoUs: d.ClockLoUs, ClockHiUs: d.ClockHiUs, SentUs: d.RanLoUs, RepliedUs: d.RanHiUs, Outcome: d.Outcome,
		LateUs: d.RanHiUs - d.RanLoUs}
	if d.RanHiUs >= forever {
		out.RepliedUs, out.LateUs = d.RanLoUs+1, -1
	}
	if d.ClockHiUs >= forever {
		out.ClockHiUs = d.ClockLoUs
	}
	return out
}

// pipelineSpecs are a simulated run's overshoot and refusal specs, as the engine builds them.
func pipelineSpecs(s Spec) (overshoot.Spec, refusal.Spec) {
	timing := overshoot.OnStamps
	if s.Timing == Intervals {
		timing = overshoot.OnServerClock
	}
	l := overshoot.Limits{Limit: s.Limit, Window: s.Window}
	os := overshoot.Spec{Model: Model, Limits: l, Clock: Model.Clock(l, s.Align == EpochAligned), Timing: timing, Quantum: s.Grain}
	rs := refusal.Spec{Kind: Name, Model: Model, Limit: s.Limit, Window: s.Window.Microseconds(), Aligned: s.Align == EpochAligned,
		Server: s.Timing == Intervals, Quantum: s.Grain, Horizon: time.Second.Microseconds()}
	return os, rs
}

// judged is a simulated run judged through the pipeline: every admit told to the key's evidence
// as the engine tells it, every decision to a refusal judge, judged in passes as the engine's
// low-water mark allows.
func judged(s Spec, ds []decision) (overshoot.CheckResult, int64, []overshoot.Moment) {
	os, rs := pipelineSpecs(s)
	var moments []overshoot.Moment
	os.OnFirstOver = func(m overshoot.Moment) { moments = append(moments, m) }
	ev := overshoot.NewEvidence(os)
	j := refusal.New(rs)
	for i, d := range ds {
		pd := asPipeline(d)
		if d.Outcome == evidence.Admitted {
			ev.Admit(pd, func() {})
		}
		j.Record(pd)
		if i%200 == 199 {
			j.JudgeBefore(pd.SentUs - 2*s.Window.Microseconds()) // the engine's passes, a little behind
		}
	}
	j.JudgeBefore(refusal.Forever)
	return ev.Finish(), j.Count, moments
}

// Through the pipeline (the wrapper every kind's checker is fed by, the refusal judges' batches)
// the model holds every correct member and catches an overshoot and a too-strict member as its
// rules do, the first overshoot told as the admits of its two windows.
func TestThePipelineJudgesAsTheRules(t *testing.T) {
	for seed := range 12 {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		m, r := randomCorrect(rng)
		ds := m.simulate(rng, r)
		s := m.spec(r)
		res, wrong, _ := judged(s, ds)
		if res.Overshoot > 0 || wrong > 0 {
			t.Errorf("seed %d: %v, %+v: blamed through the pipeline: %+v, %d false rejects", seed, m, s, res, wrong)
		}
	}
	for _, st := range settings {
		rng := rand.New(rand.NewPCG(1, uint64(admitsAtLimit)))
		m, r := buggyRun(rng, admitsAtLimit, st)
		ds := m.simulate(rng, r)
		s := m.spec(r)
		res, _, moments := judged(s, ds)
		if want := check(s, ds); res.Overshoot != want.Overshoot || res.OvershootEvent != want.Events {
			t.Errorf("%s: %+v through the pipeline, %+v by the rules", st.name, res, want)
		}
		if res.Overshoot > 0 && (len(moments) != 1 || moments[0].Count <= moments[0].Allowed) {
			t.Errorf("%s: the first overshoot told as %+v, want one moment of more admits than fit", st.name, moments)
		}
		rng = rand.New(rand.NewPCG(1, uint64(countsRefused)))
		m, r = buggyRun(rng, countsRefused, st)
		ds = m.simulate(rng, r)
		_, wrong, _ := judged(m.spec(r), ds)
		if wrong == 0 && len(falseRejects(m.spec(r), ds)) > 0 {
			t.Errorf("%s: a member counting refused calls caught by the rules, not through the pipeline", st.name)
		}
	}
}
