package overshoot

import "github.com/limitctl/limitctl/internal/evidence"

// Model is a limiter kind's overshoot evidence, declared in the kind's own folder
// (internal/evidence/kind/<name>): its checkers on the stamps and over the calls' intervals, how
// its evidence on stamps allows for reordering, and which admits are no evidence at all.
type Model interface {
	// Checker is one key's checker under s, on the stamps or over the calls' intervals as
	// s.Timing says; horizonMs is how late an admit on the stamps may be recorded after a newer
	// one (the call timeout and a second to spare).
	Checker(s Spec, horizonMs int64) Checker
	// Clock is how the evidence on stamps allows for reordering under l, its windows
	// epoch-aligned or of an alignment unknown.
	Clock(l Limits, epochAligned bool) Clock
	// TooLate reports whether an admit judged on its stamp is no evidence either way: it reached
	// the limiter too long after its stamp, or in a window its stamp does not name.
	TooLate(s Spec, d evidence.Decision) bool
}
