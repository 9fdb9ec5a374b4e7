package slidingcounter

// Outcome is what a decision did to the limiter's state, as far as the caller can tell.
type Outcome uint8

// The outcomes of a decision.
const (
	Refused  Outcome = iota // the limiter said no: a correct member counted nothing
	Admitted                // the limiter said yes
	Unknown                 // errored, timed out or unreadable: it may have admitted, at any time after it was sent
)

// Decision is one call as the model sees it, in µs: the limiter's clock when it decided lies in
// [ClockLoUs, ClockHiUs], and the call ran at one instant in [RanLoUs, RanHiUs] of a real clock
// every decision of the run shares. Build it with Stamped or Timed.
type Decision struct {
	ClockLoUs, ClockHiUs int64
	RanLoUs, RanHiUs     int64
	Outcome              Outcome
}

// Stamped is a call that passed the limiter the time stampUs (the now of its caller's clock), and
// reached it at most lateUs after the most advanced caller's clock read stampUs: the skew between
// the callers' clocks and the call's own round trip. On that most advanced clock it ran in
// [stampUs, stampUs+lateUs]: no later, and no earlier, since no clock was ahead of it when the stamp
// was read. A call of unknown outcome may run at any time after.
func Stamped(stampUs, lateUs int64, o Outcome) Decision {
	d := Decision{ClockLoUs: stampUs, ClockHiUs: stampUs, RanLoUs: stampUs, RanHiUs: stampUs + max(0, lateUs), Outcome: o}
	if o == Unknown {
		d.RanHiUs = forever
	}
	return d
}

// Timed is a call sent at sentUs and answered at repliedUs on the run's monotonic clock, which
// the limiter decided on a clock of its own at one instant between the two. A call of unknown
// outcome may run, and read its clock, at any time after it was sent.
func Timed(sentUs, repliedUs int64, o Outcome) Decision {
	d := Decision{ClockLoUs: sentUs, ClockHiUs: max(sentUs, repliedUs), RanLoUs: sentUs, RanHiUs: max(sentUs, repliedUs), Outcome: o}
	if o == Unknown {
		d.ClockHiUs, d.RanHiUs = forever, forever
	}
	return d
}

// mayAdmit is true for a decision that may have taken room.
func (d Decision) mayAdmit() bool { return d.Outcome != Refused }
