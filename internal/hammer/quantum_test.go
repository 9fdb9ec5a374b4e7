package hammer

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/limiter"
)

// upstash's layout on whole seconds: the two-counter estimate's evidence allows the second its
// script may weigh the previous window by, though the counters' names carry the window's index (a
// correct member read TOO STRICT across a minute's window edge when judged at a millisecond); a
// fixed window of the same contract keeps the index's millisecond.
func TestATwoCounterOnWholeSecondsIsJudgedAtWholeSeconds(t *testing.T) {
	spec := contract.Spec{Keys: "{key}:{window_index} {key}:{prev_window_index}", Args: "{now_s_int} {window_s} {limit} {window_ms}", Allowed: "reply[1] == 1"}
	for kind, want := range map[limiter.Kind]time.Duration{limiter.SlidingWindowCounter: time.Second, limiter.FixedWindow: time.Millisecond} {
		ct, err := contract.Compile(spec, limiter.DefaultContract(kind))
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Limiter: kind, Window: time.Minute, Contract: ct}
		if got := timeQuantum(o, limiter.Custom); got != want {
			t.Errorf("%s: judged at %s, want %s", kind, got, want)
		}
	}
}
