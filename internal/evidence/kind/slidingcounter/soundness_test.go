package slidingcounter

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

func durationUs(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// randomCorrect is a correct member and a load for it, drawn from every family the model holds:
// each rounding; windows on the epoch, at a phase of their own, or re-phased after idle spells;
// a clock of milliseconds or whole seconds; counters living two windows and up to a second more;
// stamped or timed on a server clock that drifts.
func randomCorrect(rng *rand.Rand) (member, run) {
	m := member{rounding: rounding(rng.IntN(4)), unitUs: 1000}
	windowUs := []int64{250_000, 1_000_000}[rng.IntN(2)]
	if rng.IntN(4) == 0 {
		m.unitUs, windowUs = 1_000_000, []int64{4_000_000, 10_000_000}[rng.IntN(2)]
	}
	switch rng.IntN(3) {
	case 1:
		m.phaseUs = rng.Int64N(windowUs)
	case 2:
		m.phaseUs, m.rephase = rng.Int64N(windowUs), true
	}
	m.ttlUs = 2 * windowUs // the least a correct member keeps a counter; upstash adds a second
	if rng.IntN(2) == 0 {
		m.ttlUs += rng.Int64N(1_000_001)
	}
	timing := Timing(rng.IntN(2))
	return m, newRun(rng, windowUs, []int64{5, 10, 20}[rng.IntN(3)], timing, 12)
}

func TestNoCorrectMemberIsBlamedForAnOvershootOrAFalseReject(t *testing.T) {
	seeds := 100
	if n, err := strconv.Atoi(os.Getenv("SLIDINGCOUNTER_SEEDS")); err == nil {
		seeds = n
	}
	if testing.Short() {
		seeds = 40
	}
	admits, refusals := 0, 0
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 53))
		m, r := randomCorrect(rng)
		ds := m.simulate(rng, r)
		s := m.spec(r)
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		res := check(s, ds)
		if res.Proven || res.Overshoot > 0 {
			t.Errorf("seed %d: %v, %+v: blamed for an overshoot: %+v\n%s", seed, m, s, res, res.First.How(0))
		}
		if fr := falseRejects(s, ds); len(fr) > 0 {
			t.Errorf("seed %d: %v, %+v: %d false rejects, the first: %s", seed, m, s, len(fr), fr[0].How(0))
		}
		for _, d := range ds {
			switch d.Outcome {
			case evidence.Admitted:
				admits++
			case evidence.Refused:
				refusals++
			}
		}
	}
	t.Logf("%d correct members, %d admits and %d refusals judged: none blamed", seeds, admits, refusals)
}
