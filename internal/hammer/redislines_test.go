package hammer

import (
	"strings"
	"testing"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/redistrace"
)

// A check-then-act decision that overshot is the race; one that showed none (go-chi/httprate over
// a Redis counter: MGET, decide under the process's mutex, INCRBY) is said to have been
// serialized by the application, which instances side by side would not share. Atomic code gets
// no such note.
func TestRedisLinesSayWhenTheApplicationSerializedACheckThenAct(t *testing.T) {
	cta := func() *redistrace.Summary {
		return &redistrace.Summary{Decision: redistrace.CheckThenAct, Why: "every request read (MGET) and only admits wrote (INCRBY)"}
	}
	r := Result{Summary: bench.Summary{Strategies: []bench.StrategySnapshot{
		{Name: "raced", Findings: fold.Findings{Peak: 24, Overshoot: 4}},
		{Name: "locked", Findings: fold.Findings{Peak: 20}},
		{Name: "atomic", Findings: fold.Findings{Peak: 20}},
	}}, RedisTrace: map[string]*redistrace.Summary{
		"raced": cta(), "locked": cta(), "atomic": {Decision: redistrace.Atomic, Why: "a script each decision (EVALSHA)"},
	}}
	lines := r.RedisLines(0)
	if len(lines) != 3 {
		t.Fatalf("want a line per traced target, got %q", lines)
	}
	for i, want := range []bool{false, true, false} {
		if got := strings.Contains(lines[i], SerializedNote); got != want {
			t.Errorf("line %q: serialized note %v, want %v", lines[i], got, want)
		}
	}
}
