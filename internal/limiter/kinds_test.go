package limiter_test

import (
	"slices"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/scripts"
)

// Each kind's description is whole: its script is a shipped limiter script (and so a Function
// of the library), its contract compiles, its strategies parse and include the custom one, and
// it names what it counts for the dashboard, the report and inspect. Every shipped limiter
// script belongs to a kind.
func TestEveryKindIsDescribed(t *testing.T) {
	var described []string
	for _, k := range limiter.Kinds() {
		d := k.Describe()
		if parsed, err := limiter.ParseKind(string(k)); err != nil || parsed != k || d.Kind != k {
			t.Errorf("%s: parses as %q (%v), describes %q", k, parsed, err, d.Kind)
		}
		s, err := scripts.Lookup(d.Script)
		if err != nil || !s.Limiter {
			t.Errorf("%s: script %q is not a shipped limiter script (%v)", k, d.Script, err)
		}
		described = append(described, d.Script)
		if _, err := contract.Compile(contract.Spec{}, d.Contract); err != nil {
			t.Errorf("%s: the shipped contract does not compile: %v", k, err)
		}
		if !slices.Contains(d.Strategies, limiter.Custom) || !slices.Contains(d.Strategies, limiter.Lua) {
			t.Errorf("%s: strategies %v lack lua or custom", k, d.Strategies)
		}
		for _, s := range d.Strategies {
			if _, err := limiter.ParseStrategy(string(s)); err != nil {
				t.Errorf("%s: %v", k, err)
			}
		}
		if d.Skew == nil || d.Skew(20, time.Second) <= 0 {
			t.Errorf("%s: no default skew: every limiter's load is reordered", k)
		}
		if d.Limits == "" || d.Inspect == "" || d.CountLabel == "" || d.ChartLabel == "" || len(d.Commands) == 0 {
			t.Errorf("%s: %+v leaves a name empty", k, d)
		}
	}
	for _, s := range scripts.All() {
		if s.Limiter && !slices.Contains(described, s.Name) {
			t.Errorf("script %s ships as a limiter (and a Function) but no kind runs it", s.Name)
		}
	}
}

func TestPhraseNamesKindsInASentence(t *testing.T) {
	for _, tc := range []struct {
		strategy limiter.Strategy
		want     string
	}{
		{limiter.LuaTSMember, "the concurrency and sliding-window limiters"},
		{limiter.Multi, "the concurrency, fixed-window, sliding-window and token-bucket limiters"},
	} {
		if got := limiter.SupportedBy(tc.strategy); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.strategy, got, tc.want)
		}
	}
	if got := limiter.Phrase([]limiter.Kind{limiter.Concurrency}); got != "the concurrency limiter" {
		t.Errorf("one kind: %q", got)
	}
}

// Every kind has a model of its evidence, which nothing outside its folder and the registry needs
// to know the kind to use: a checker for each way calls are timed that judges one admit under its
// limit as none over it, a refusal rule that blames no lone refusal, and its words.
func TestEveryKindHasAModel(t *testing.T) {
	for _, k := range limiter.Kinds() {
		m := k.Describe().Model
		if m == nil {
			t.Errorf("%s: no model of its evidence", k)
			continue
		}
		if m.Unit() == "" || m.Counted() == "" {
			t.Errorf("%s: its model leaves a word empty", k)
		}
		limits := overshoot.Limits{Limit: 5, Window: time.Second, Rate: 5, Skew: time.Millisecond}
		for _, timing := range []overshoot.Timing{overshoot.OnStamps, overshoot.OnServerClock, overshoot.OnEndpoint} {
			spec := overshoot.Spec{Model: m, Limits: limits, Clock: m.Clock(limits, true), Timing: timing, Key: "k",
				Horizon: time.Second, StaleAfter: time.Second, Hold: 10 * time.Millisecond, Now: time.Now}
			ev := overshoot.NewEvidence(spec)
			now := time.UnixMilli(1_700_000_000_000)
			d := evidence.Decision{ID: 1, NowUs: now.UnixMicro(), AtMs: now.UnixMilli(), SentUs: 1e6, RepliedUs: 1e6 + 11_000, LateUs: 1000}
			if got := ev.Admit(d, func() {}); got != overshoot.Judged {
				t.Errorf("%s (timing %d): one admit on time was not judged (%d)", k, timing, got)
			}
			if r := ev.Finish(); r.Overshoot != 0 || r.OvershootEvent != 0 {
				t.Errorf("%s (timing %d): one admit judged %+v", k, timing, r)
			}
		}
		j := refusal.New(refusal.Spec{Kind: string(k), Model: m, Limit: 5, Window: time.Second.Microseconds(), RatePerSec: 5,
			StaleAfter: time.Second.Microseconds(), Horizon: time.Second.Microseconds()})
		j.Record(evidence.Decision{SentUs: 1000, RepliedUs: 2000, ClockLoUs: 1000, ClockHiUs: 1000, Outcome: evidence.Admitted, ReleasedUs: 3000, ReleaseOK: true})
		j.Record(evidence.Decision{SentUs: 1000, RepliedUs: 2000, ClockLoUs: 1000, ClockHiUs: 1000, Outcome: evidence.Refused})
		j.JudgeBefore(refusal.Forever)
		if j.Count != 1 {
			t.Errorf("%s: a refusal with one of five taken was not proven wrong (%d)", k, j.Count)
		}
	}
}
