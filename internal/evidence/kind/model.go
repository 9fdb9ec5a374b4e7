// Package kind is what a limiter kind's evidence declares, each kind in a folder of its own
// beneath it (held, fixed, sliding, bucket, slidingcounter): its checkers on the stamps and over
// the calls' intervals, its refusal rule, and how it is told. The kind registry
// (internal/limiter/kind_*.go) gives each kind its Model; nothing else names a kind.
package kind

import (
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// Model is a limiter kind's evidence.
type Model interface {
	overshoot.Model
	refusal.Model
	// Unit says how the kind's overshoot is counted: "per window", "held at once".
	Unit() string
	// Alignable: where its windows begin is the limiter's own, which a contract may state
	// (--window-start: epoch, first-hit, or any), and the evidence judges them any alignment unless it does.
	Alignable() bool
	// TwoClocks: on a virtual clock whose TIME never goes back per key, its admits are judged over
	// the stamps' clock and the real one at once (a log whose TTLs run on the server's clock).
	TwoClocks() bool
	// LateByWindow: an admit that reached the limiter a window or more after its stamp is no
	// evidence (its window may rightly have been forgotten).
	LateByWindow() bool
}
