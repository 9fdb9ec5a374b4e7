//go:build race

package refusal_test

import (
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// raceDetector: the race detector slows the single-goroutine simulations tenfold and finds
// nothing in them, so they run fewer seeds (the engine's tests keep their full size).
const raceDetector = true
