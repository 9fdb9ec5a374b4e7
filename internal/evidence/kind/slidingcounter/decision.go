package slidingcounter

import "github.com/limitctl/limitctl/internal/evidence"

// decision is one call as the model judges it, in µs: the limiter's clock when it decided lies in
// [ClockLoUs, ClockHiUs], and the call ran at one instant in [RanLoUs, RanHiUs] of a real clock
// every decision of the run shares. Build it with stamped or timed (of the pipeline's decision:
// decisionOf).
type decision struct {
	ClockLoUs, ClockHiUs int64
	RanLoUs, RanHiUs     int64
	Outcome              evidence.Outcome
}

// stamped is a call that passed the limiter the time stampUs (the now of its caller's clock), and
// reached it at most lateUs after the most advanced caller's clock read stampUs: the skew between
// the callers' clocks and the call's own round trip. On that most advanced clock it ran in
// [stampUs, stampUs+lateUs]: no later, and no earlier, since no clock was ahead of it when the stamp
// was read. A call of unknown outcome, or of unknown lateness (lateUs < 0), may run at any time
// after.
func stamped(stampUs, lateUs int64, o evidence.Outcome) decision {
	d := decision{ClockLoUs: stampUs, ClockHiUs: stampUs, RanLoUs: stampUs, RanHiUs: stampUs + max(0, lateUs), Outcome: o}
	if o == evidence.Unknown || lateUs < 0 {
		d.RanHiUs = forever
	}
	return d
}

// timed is a call sent at sentUs and answered at repliedUs on the run's monotonic clock, which
// the limiter decided on a clock of its own at one instant between the two. A call of unknown
// outcome may run, and read its clock, at any time after it was sent.
func timed(sentUs, repliedUs int64, o evidence.Outcome) decision {
	d := decision{ClockLoUs: sentUs, ClockHiUs: max(sentUs, repliedUs), RanLoUs: sentUs, RanHiUs: max(sentUs, repliedUs), Outcome: o}
	if o == evidence.Unknown {
		d.ClockHiUs, d.RanHiUs = forever, forever
	}
	return d
}

// decisionOf is the pipeline's decision d as the model judges it under s: timed over its interval
// on a clock the caller does not see, or stamped with the time the caller gave it (on a virtual
// clock, the bounds of the TIME answered), as late as its call may have been.
func decisionOf(s Spec, d evidence.Decision) decision {
	if s.Timing == Intervals {
		sent, replied := d.Span()
		return timed(sent, replied, d.Outcome)
	}
	out := stamped(d.ClockLoUs, d.LateUs, d.Outcome)
	out.ClockHiUs = max(out.ClockLoUs, d.ClockHiUs)
	return out
}

// mayAdmit is true for a decision that may have taken room.
func (d decision) mayAdmit() bool { return d.Outcome != evidence.Refused }
