package overshoot

import (
	"sync/atomic"
	"time"

	"github.com/limitctl/limitctl/internal/bench/tally"
	"github.com/limitctl/limitctl/internal/limiter"
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
	Limits                   // the kind's evidence, its numbers, the workers' skew
	Clock      Clock         // how the evidence on stamps allows for reordering (ClockFor)
	Timing     Timing        // what a call's time is
	Key        string        // the limiter key (Witness, Shared)
	Horizon    time.Duration // the call timeout: how late an admit may come after a newer one
	Quantum    time.Duration // how finely the script is told the time (Stamp)
	Monotone   bool          // the virtual clock answers TIME monotonically per key (Call.LatestUs)
	StaleAfter time.Duration // when the concurrency limiter reclaims a request (WitnessStale)
	StaleUnit  time.Duration // the unit the script is told StaleAfter in (WitnessLive)
	// Hold is what an endpoint that limits concurrency promises (OnEndpoint: --hold): it answers an admit no sooner than Hold after it took the slot, and
	// releases it before answering (HeldSpans).
	Hold time.Duration
	Now  func() time.Time // the clock a held admit is recorded at, Skew ahead
	// Witness builds a witness of Key shared with other processes (nil: this process's own).
	Witness func(key string) Checker
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

// Call is one decision as the evidence judges it.
type Call struct {
	ID      uint64        // the request, as Release names it (held evidence)
	Now     time.Time     // the caller's clock when the call was stamped, its skew included
	StampMs int64         // the time it is judged at (Stamp, or the time its schedule answered)
	Late    time.Duration // how late after StampMs it may have reached the limiter; negative: unknown
	// LatestUs (Monotone) is the highest stamp sent on the key before the reply: TIME's bound.
	LatestUs      int64
	Sent, Replied time.Duration // since the run began: when the call was sent and its reply read
	Abandoned     bool          // admitted and never to be released, as by a crashed client
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
// every decision on the key.
type Evidence struct {
	check    Checker
	held     HeldChecker      // the concurrency witness, or nil
	late     LateAdmitter     // the bucket's tiers on stamps, or nil
	interval IntervalAdmitter // evidence on the calls' intervals, or nil
	anchors  Anchorer         // the unaligned fixed window noting its openers, or nil
	tick     interface{ TakeTickPeak() int64 }
	probe    Prober
	anchored AnchoredProber
	early    interface{ Early() int64 } // the held spans, or nil
	spec     Spec
	tooLate  atomic.Int64 // admits left out as TooLate
}

// NewEvidence builds a key's evidence by its limiter's evidence and the calls' Timing.
func NewEvidence(s Spec) *Evidence {
	e := &Evidence{spec: s}
	e.check = e.checker()
	e.held, _ = e.check.(HeldChecker)
	e.late, _ = e.check.(LateAdmitter)
	e.interval, _ = e.check.(IntervalAdmitter)
	e.tick, _ = e.check.(interface{ TakeTickPeak() int64 })
	e.probe, _ = e.check.(Prober)
	e.anchored, _ = e.check.(AnchoredProber)
	e.early, _ = e.check.(interface{ Early() int64 })
	if a, ok := e.check.(Anchorer); ok && s.OpenersSeen && s.Shared == nil {
		if s.AnchorAtOpeners {
			a.UseAnchors()
		} else {
			a.NoteOpeners()
		}
		e.anchors = a
	}
	if r, ok := e.check.(Reporter); ok && s.OnFirstOver != nil {
		r.OnFirstOver(s.OnFirstOver)
	}
	ShareHistoryBudget(e.check, s.History)
	return e
}

// checker is the checker the spec calls for. The held evidence is the witness, but for an
// endpoint (OnEndpoint: it promises a hold D, and an admit certainly holds its slot over
// [Replied - D, Sent + D]) the held spans, which Admit then feeds as any IntervalAdmitter.
func (e *Evidence) checker() Checker {
	s := e.spec
	if s.Evidence == limiter.HeldEvidence {
		if s.Timing == OnEndpoint {
			return NewHeldSpans(s.Limit, s.Hold)
		}
		if s.Witness != nil {
			return s.Witness(s.Key)
		}
		w := NewWitness(s.Limit, WitnessStale(s.StaleAfter, s.Quantum, s.StaleUnit).Milliseconds())
		w.CountLiveFor(WitnessLive(s.StaleAfter, s.StaleUnit).Milliseconds())
		return w
	}
	switch s.Timing {
	case OnTwoClocks:
		return TwoClockSliding(s.Limits)
	case OnServerClock, OnEndpoint:
		return IntervalFor(s.Limits)
	}
	horizonMs := s.Horizon.Milliseconds() + 1000 // the call timeout, and a second to spare
	local := ClientChecker(s.Limits, s.Clock, horizonMs)
	if s.Shared != nil {
		return s.Shared.Checker(s.Key, local, ClientChecker(s.Limits, s.Clock, 1))
	}
	return local
}

// Admit judges one admitted call. kept is called once the call is known to be judged: before
// any checker can name it behind a first overshoot, or, for the interval evidence (which judges
// a call only a lag after the newest reply), once it was taken.
func (e *Evidence) Admit(c Call, kept func()) Outcome {
	if e.interval != nil {
		if !e.interval.AdmitInterval(c.Sent, c.Replied) {
			return LeftOut
		}
		kept()
		return Judged
	}
	if e.isTooLate(c) {
		e.tooLate.Add(1)
		e.Unjudged(c)
		return TooLate
	}
	kept()
	switch {
	case e.held != nil:
		// Recorded as of the most advanced worker clock (up to Skew ahead of this one): a call
		// decided by it may already have reclaimed a held request as abandoned.
		e.held.AdmitHeld(c.ID, c.Now.UnixMilli(), e.spec.Now().Add(e.spec.Skew).UnixMilli())
		if c.Abandoned {
			e.held.AbandonHeld(c.ID) // held until stale-after reclaims it
		}
	case e.late != nil:
		e.late.AdmitLate(c.StampMs, c.Late)
	default:
		e.check.Admit(c.StampMs)
	}
	return Judged
}

// isTooLate reports whether c is no evidence either way. The window scripts are exact for a
// request that reaches Redis within one window of its now (the log keeps two windows, a counter
// lives two); a later one may rightly see an emptier window. The bucket's and the unaligned
// fixed window's evidence allow for a bounded lateness (Clock.LateMs). On the monotone virtual
// clock an epoch-aligned window's admit whose TIME may lie in a later window than its stamp's
// (its span straddles a window's end) is in a window unknown (clock_evidence.go).
func (e *Evidence) isTooLate(c Call) bool {
	s := e.spec
	if s.Evidence.Windowed() && c.Late >= s.Window || s.Clock.LateMs > 0 && c.Late > time.Duration(s.Clock.LateMs)*time.Millisecond {
		return true
	}
	if !s.Monotone || !s.Clock.Aligned || s.Evidence != limiter.FixedWindowEvidence {
		return false
	}
	w := max(1, s.Window.Milliseconds())
	lo := Stamp(s.Quantum, c.Now).UnixMilli()
	hi := Stamp(s.Quantum, time.UnixMicro(c.LatestUs)).UnixMilli()
	return tally.FloorDiv(lo, w) != tally.FloorDiv(hi, w)
}

// Unjudged tells the evidence of a call that may have admitted and is not judged (it failed, or
// came too late), stamped c.StampMs and at most c.Late late: windows anchored at their openers
// must know of every call that may have opened one (Spec.OpenersSeen).
func (e *Evidence) Unjudged(c Call) {
	if e.anchors == nil {
		return
	}
	lateMs := int64(-1)
	if c.Late >= 0 {
		lateMs = (c.Late + time.Millisecond - 1).Milliseconds()
	}
	e.anchors.NoteUnjudged(c.StampMs, lateMs)
}

// Release records that request id no longer holds its slot, before its release is sent, so the
// witness never over-counts (a no-op but for the held evidence).
func (e *Evidence) Release(id uint64) {
	if e.held != nil {
		e.held.ReleaseHeld(id)
		return
	}
	e.check.Release()
}

// Result is the verdict so far.
func (e *Evidence) Result() CheckResult { return e.withTooLate(e.check.Result()) }

// Finish settles what is still pending and returns the verdict.
func (e *Evidence) Finish() CheckResult { return e.withTooLate(e.check.Finish()) }

// withTooLate counts the admits left out as TooLate among r's unjudged.
func (e *Evidence) withTooLate(r CheckResult) CheckResult {
	r.Unjudged += e.tooLate.Load()
	return r
}

// Early is how many admits came back sooner than the hold the endpoint promises (HeldSpans.Early):
// it does not hold its slots that long, and those admits are no evidence; 0 for other evidence.
func (e *Evidence) Early() int64 {
	if e.early == nil {
		return 0
	}
	return e.early.Early()
}

// Timeline is what the evidence proved of one window, placed at the time it was about (µs on
// its checker's clock), for checkers that judge long after (the interval evidence); nil for
// the others, whose counts the ticks already show as they happen.
func (e *Evidence) Timeline() []TimedCount {
	if t, ok := e.check.(Timeliner); ok {
		return t.Timeline()
	}
	return nil
}

// TakeTickPeak is the highest count held at once since the last call (the witness; 0 otherwise).
func (e *Evidence) TakeTickPeak() int64 {
	if e.tick == nil {
		return 0
	}
	return e.tick.TakeTickPeak()
}

// CaughtFrom is the evidence's power once finished (Prober); ok is false when none up to maxK.
func (e *Evidence) CaughtFrom(maxK int64) (k int64, ok bool) {
	if e.probe == nil {
		return 0, false
	}
	return e.probe.CaughtFrom(maxK)
}

// CaughtFromAnchored is the power windows anchored at their openers would have had (AnchoredProber);
// ok is false when none up to maxK, or the evidence has no such windows or no complete notes.
func (e *Evidence) CaughtFromAnchored(maxK int64) (k int64, ok bool) {
	if e.anchored == nil {
		return 0, false
	}
	return e.anchored.CaughtFromAnchored(maxK)
}
