package bench

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench/overshoot"
	"github.com/limitctl/limitctl/internal/limiter"
)

// Every limiter kind's evidence has a checker, for the client's clock and for the server's, and
// one admit under a limit of 5 is no overshoot to any of them.
func TestEveryKindHasAChecker(t *testing.T) {
	for _, k := range limiter.Kinds() {
		cfg := Config{Limiter: k, Limit: 5, Window: time.Second, Rate: 5, StaleAfter: time.Second, Horizon: time.Second}
		for _, serverClock := range []bool{false, true} {
			run := StrategyRun{ServerClock: serverClock}
			s := &strategyState{cfg: cfg, run: run, ev: overshoot.ClockFor(limitsOf(cfg), run.EpochAligned)}
			c := s.newChecker("k")
			c.Admit(1000)
			if r := c.Finish(); r.Overshoot != 0 || r.OvershootEvent != 0 {
				t.Errorf("%s (server clock %v): one admit judged %+v", k, serverClock, r)
			}
		}
	}
}
