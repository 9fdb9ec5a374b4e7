package evidence

// Decision is one call on a limiter key as the evidence judges it, whatever produced it: the
// engine's Redis call, an HTTP target's request, a record judge reads, a call another process
// published to a shared run's timeline. The overshoot checkers read an admit's times, the
// refusal judges every decision's; nothing else about a call is evidence.
//
// Times on the run's monotonic clock (SentUs, RepliedUs, ReleasedUs, the Span) are µs since the
// run began, sent rounded down and replied up: the limiter decided somewhere between them. The
// limiter's own clock (ClockLoUs, ClockHiUs) is µs on the clock it decided by: the now a caller
// gave it (a client or virtual clock), or on a clock the caller does not see (a server's TIME,
// an endpoint's) again [SentUs, RepliedUs].
type Decision struct {
	// ID names the request (its trace in its worker's ring, its release to a witness); 0 when
	// there is nothing to look up.
	ID uint64
	// Key is the limiter key's index in its strategy (one evidence per key).
	Key     int32
	Outcome Outcome
	// ReleaseOK: a held request's release succeeded (ReleasedUs); Abandoned: admitted and never
	// released on purpose, held until stale-after reclaims it.
	ReleaseOK, Abandoned bool
	SentUs, RepliedUs    int64
	// ClockLoUs and ClockHiUs bound the time the limiter decided by.
	ClockLoUs, ClockHiUs int64
	// ReleasedUs is when a held request's release was answered (0: none).
	ReleasedUs int64
	// NowUs is the caller's clock when it stamped the call (µs since the epoch, its skew
	// included); 0 where the call carried none.
	NowUs int64
	// AtMs and LateUs are an admit's time on the stamps (ms since the epoch, as the script could
	// know it, or the time its schedule answered) and how late after it the call may have reached
	// the limiter (-1: unknown).
	AtMs, LateUs int64
	// SpanSentUs and SpanRepliedUs are the interval an admit is judged over where it is wider than
	// [SentUs, RepliedUs] (a virtual clock's TIME judged on both clocks); both 0 otherwise.
	SpanSentUs, SpanRepliedUs int64
}

// Outcome is what a decision did to the limiter's state, as far as its caller can tell.
type Outcome uint8

// The outcomes of a decision.
const (
	Refused  Outcome = iota // the limiter said no: a correct limiter took no room
	Admitted                // the limiter said yes
	Unknown                 // errored, timed out, cut off, or unreadable: it may have admitted, at any time after it was sent
)

// Span is the interval an admit is judged over on the run's monotonic clock (µs).
func (d *Decision) Span() (sentUs, repliedUs int64) {
	if d.SpanSentUs != 0 || d.SpanRepliedUs != 0 {
		return d.SpanSentUs, d.SpanRepliedUs
	}
	return d.SentUs, d.RepliedUs
}
