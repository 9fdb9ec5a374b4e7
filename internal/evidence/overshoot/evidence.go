package overshoot

import (
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

// Timing is what the evidence takes a call's time to be.
type Timing int

const (
	// OnStamps: the time the caller gave the script, reached at most Call.Late after it.
	OnStamps Timing = iota
	// OnServerClock: a clock the caller does not see, read within [Call.Sent, Call.Replied]
	// (a script that reads TIME; an HTTP endpoint, whose concurrency slot is judged by the hold
	// it promises, Spec.Hold).
	OnServerClock
	// OnTwoClocks: a sliding window's TIME on the monotone virtual clock and its TTLs on the real one.
	OnTwoClocks
	// OnEndpoint: an endpoint's clock (an HTTP target's), read within [Call.Sent, Call.Replied]
	// as OnServerClock; it holds and releases its concurrency slots itself, so they are judged by
	// the hold it promises (Spec.Hold).
	OnEndpoint
)

// Spec is what one key's evidence is built from.
type Spec struct {
	Model                    // the kind's evidence
	Limits                   // its numbers, the workers' skew
	Clock      Clock         // how the evidence on stamps allows for reordering (Model.Clock)
	Timing     Timing        // what a call's time is
	Key        string        // the limiter key (Witness, Shared)
	Horizon    time.Duration // the call timeout: how late an admit may come after a newer one
	Quantum    time.Duration // how finely the script is told the time (Stamp)
	Monotone   bool          // the virtual clock answers TIME monotonically per key (Decision.ClockHiUs)
	StaleAfter time.Duration // when the concurrency limiter reclaims a request (WitnessStale)
	StaleUnit  time.Duration // the unit the script is told StaleAfter in (WitnessLive)
	// Hold is what an endpoint that limits concurrency promises (OnEndpoint: --hold): it answers an admit no sooner than Hold after it took the slot, and
	// releases it before answering (HeldSpans).
	Hold time.Duration
	Now  func() time.Time // the clock a held admit is recorded at, Skew ahead
	// Witness builds a witness of Key shared with other processes (nil: this process's own).
	Witness func(key string) *RedisWitness
	// Shared judges the windows and bucket on stamps with every process's admits (nil: this one's).
	Shared *SharedAdmits
	// OpenersSeen: every call on Key is this process's, and each that may have admitted unjudged
	// is told to Unjudged, so the windows' openers are known (never with Shared).
	OpenersSeen bool
	// AnchorAtOpeners judges windows of unknown alignment anchored at their openers (UseAnchors;
	// needs OpenersSeen); otherwise the openers are only noted, for CaughtFromAnchored.
	AnchorAtOpeners bool
	History         *HistoryBudget // what the evidence keeps to state its power (nil: its own)
	OnFirstOver     func(Moment)   // told once what was behind the first overshoot (nil: not told)
}

// Outcome is what the evidence did with an admit.
type Outcome int

const (
	// Judged: the admit is in the evidence.
	Judged Outcome = iota
	// LeftOut: the interval evidence left it out (its call too slow, or answered after its span
	// was judged); its Result counts it as unjudged.
	LeftOut
	// TooLate: it reached the limiter too long after its stamp, or in a window its stamp does not
	// name, to be evidence either way; noted as Unjudged, and counted so in Result.
	TooLate
)

// Evidence is one limiter key's evidence of overshoot: the checker its Spec calls for, told of
// every decision on the key, and what it left out as too late.
type Evidence struct {
	Checker
	spec    Spec
	tooLate atomic.Int64 // admits left out as TooLate
}

// NewEvidence builds a key's evidence by its limiter's model and the calls' Timing.
func NewEvidence(s Spec) *Evidence {
	e := &Evidence{spec: s, Checker: checker(s)}
	if s.OnFirstOver != nil {
		e.OnFirstOver(s.OnFirstOver)
	}
	e.ShareHistory(budgetOr(s.History))
	return e
}

// checker is the checker the spec calls for: its kind's, and on the stamps with admits shared
// with other processes, the kind's over this process's and over every process's together.
func checker(s Spec) Checker {
	horizonMs := s.Horizon.Milliseconds() + 1000 // the call timeout, and a second to spare
	local := s.Model.Checker(s, horizonMs)
	if s.Timing == OnStamps && s.Shared != nil {
		return s.Shared.Checker(s.Key, local, s.Model.Checker(s, 1))
	}
	return local
}

// Admit judges one admitted call: on the stamps, an admit its kind says is too late to be
// evidence is left out (TooLate) and noted as unjudged; every other goes to the checker.
func (e *Evidence) Admit(d evidence.Decision, kept func()) Outcome {
	if e.spec.Timing == OnStamps && e.spec.Model.TooLate(e.spec, d) {
		e.tooLate.Add(1)
		e.Unjudged(d)
		return TooLate
	}
	return e.Checker.Admit(d, kept)
}

// Result is the verdict so far.
func (e *Evidence) Result() CheckResult { return e.withTooLate(e.Checker.Result()) }

// Finish settles what is still pending and returns the verdict.
func (e *Evidence) Finish() CheckResult { return e.withTooLate(e.Checker.Finish()) }

// withTooLate counts the admits left out as TooLate among r's unjudged.
func (e *Evidence) withTooLate(r CheckResult) CheckResult {
	r.Unjudged += e.tooLate.Load()
	return r
}
