package bench

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/limiter"
)

// Every limiter kind's evidence has a checker, for the client's clock and for the server's, and
// one admit under a limit of 5 is no overshoot to any of them.
func TestEveryKindHasAChecker(t *testing.T) {
	for _, k := range limiter.Kinds() {
		cfg := Config{Limiter: k, Limit: 5, Window: time.Second, Rate: 5, StaleAfter: time.Second, Horizon: time.Second,
			KeyCount: 1, KeyFor: func(string, int) string { return "k" }, Now: time.Now}
		for _, serverClock := range []bool{false, true} {
			s := newStrategyState(cfg, StrategyRun{ServerClock: serverClock})
			ev := s.evidence.Key(0)
			now := time.UnixMilli(1000)
			if got := ev.Admit(evidence.Decision{ID: 1, NowUs: now.UnixMicro(), AtMs: now.UnixMilli(), SentUs: 1e6, RepliedUs: 1e6}, func() {}); got != overshoot.Judged {
				t.Errorf("%s (server clock %v): one admit on time was not judged (%d)", k, serverClock, got)
			}
			if r := ev.Finish(); r.Overshoot != 0 || r.OvershootEvent != 0 {
				t.Errorf("%s (server clock %v): one admit judged %+v", k, serverClock, r)
			}
		}
	}
}
