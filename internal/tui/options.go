package tui

import (
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/limiter"
)

// Options are the facts of a run that do not change while it runs, and the dashboard's hands
// on it. Zero fields are taken from the snapshots.
type Options struct {
	Target  bench.Target
	Limiter limiter.Kind
	Limit   int64
	Workers int
	Total   time.Duration // the --duration; 0 when bounded by --requests

	// Asserts are the --assert expressions, shown as pending until Judge decides them.
	Asserts []string
	// Judge, when set, evaluates the asserts against each snapshot (it must not block).
	Judge func(bench.Snapshot) []AssertResult

	// Controls pauses and resumes the load; nil hides the pause key.
	Controls Controls
	// Quit stops the run (typically the engine context's cancel); called once, on q or Ctrl-C.
	Quit func()

	// Renderer styles the output; nil means one for the writer given to Run (or stdout).
	// NoColor forces the ASCII profile (--no-color); NO_COLOR is honoured by the renderer.
	Renderer *lipgloss.Renderer
	NoColor  bool
}

// Controls is what the dashboard may ask of the engine.
type Controls interface {
	SetPaused(paused bool)
}

// AssertResult is one --assert expression judged against a snapshot.
type AssertResult struct {
	Expr   string
	Known  bool   // false while there is nothing to judge yet
	Passed bool   // meaningful when Known
	Actual string // the value the expression saw, e.g. "11" or "4.2ms"; may be empty
}
