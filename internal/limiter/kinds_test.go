package limiter_test

import (
	"slices"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
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
		if d.Releases != (d.Evidence == limiter.HeldEvidence) {
			t.Errorf("%s: releases %v with evidence %d: only held requests are released", k, d.Releases, d.Evidence)
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
		{limiter.Lua, "the concurrency, fixed-window, sliding-window and token-bucket limiters"},
	} {
		if got := limiter.SupportedBy(tc.strategy); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.strategy, got, tc.want)
		}
	}
	if got := limiter.Phrase([]limiter.Kind{limiter.Concurrency}); got != "the concurrency limiter" {
		t.Errorf("one kind: %q", got)
	}
}
