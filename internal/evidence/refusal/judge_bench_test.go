package refusal_test

import (
	"math/rand/v2"
	"testing"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// BenchmarkRefusalJudges is the false-reject judges' own cost per decision, recorded as the
// engine records them and judged every 100ms of the stream as the engine's tick does: a
// contended default run (64 workers, limit 20, a call every 25µs; concurrency admits one call
// in eleven, the windows and the bucket their limit per second).
// Compare with the engine's whole cost per decision (BenchmarkEngineJudgingRefusals, and
// make bench-hammer, which runs the hammer side by side with refusals judged and not).
func BenchmarkRefusalJudges(b *testing.B) {
	for _, k := range testKinds {
		b.Run(string(k), func(b *testing.B) {
			spec := k.spec(refusal.Spec{Limit: 20, Window: 1_000_000, RatePerSec: 20, StaleAfter: 10_000_000,
				Skew: 5000, Horizon: 5_000_000, Aligned: true})
			r := refusal.New(spec)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			b.ResetTimer()
			next, lastAdmit := int64(0), int64(-1_000_000)
			for i := 0; i < b.N; i++ {
				sent := int64(i) * 25
				d := evidence.Decision{SentUs: sent, RepliedUs: sent + 300 + rng.Int64N(400), ClockLoUs: sent + rng.Int64N(10_000) - 5000, Outcome: evidence.Refused}
				d.ClockHiUs = d.ClockLoUs
				switch {
				case k == concurrencyKind && rng.IntN(11) == 0:
					d.Outcome = evidence.Admitted
					d.ReleasedUs, d.ReleaseOK = d.RepliedUs+2000, true
				case k != concurrencyKind && sent-lastAdmit >= 50_000:
					d.Outcome, lastAdmit = evidence.Admitted, sent
				}
				r.Record(d)
				if sent >= next {
					r.JudgeBefore(sent - 5000)
					next = sent + 100_000
				}
			}
			r.JudgeBefore(refusal.Forever)
		})
	}
}
