package tui

import (
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/trace"
)

// Options are the facts of a run that do not change while it runs, and the dashboard's hands
// on it. Zero fields are taken from the snapshots.
type Options struct {
	Target bench.Target
	// Limiter names the limiter kind in the header ("concurrency"); CountLabel names what its
	// live count is ("in-flight", "in window"; in-flight when empty). The caller takes both
	// from the kind's description, so the dashboard knows no limiter.
	Limiter    string
	CountLabel string
	Limit      int64
	Workers    int
	Total      time.Duration // the --duration; 0 when bounded by --requests

	// Asserts are the --assert expressions, shown as pending until Judge decides them.
	Asserts []string
	// Judge, when set, evaluates the asserts against each snapshot (it must not block).
	Judge func(bench.Snapshot) []AssertResult

	// Verdict is a strategy's verdict at a snapshot (verdict.InSnapshot): its panel shows the
	// verdict's own badge in the verdict's tone, as every other view does; nil shows none.
	Verdict func(snap bench.Snapshot, s bench.StrategySnapshot) verdict.Verdict

	// Redis, when set, is what an HTTP target's application sends to its Redis so far
	// (hammer --http-redis-trace): how it decides and its commands counted, one line in its
	// panel; empty for a strategy not traced. RedisHow is the how-line's tokens of the commands
	// behind a first overshoot (trace.RedisCommands.HowTokens), nil when none are known.
	Redis    func(strategy string) (decision, text string)
	RedisHow func(strategy string, first *trace.Overshoot) []string

	// Controls pauses and resumes the load; nil hides the pause key.
	Controls Controls
	// Quit ends the run early at the user's request (q): its summary is judged as a finished
	// run's. Interrupt stops it as an interruption (Ctrl-C, the dashboard failing); nil means
	// Quit. One of them is called once, whichever came first.
	Quit      func()
	Interrupt func()

	// Profile is the colours the terminal shows, as the caller decided them (NO_COLOR,
	// --no-color and a pipe mean none). Unknown (the zero value) draws in full colour, and
	// Run then lets the program detect the terminal's own profile.
	Profile colorprofile.Profile
}

// ending is what ends the run: Interrupt for an interruption (or Quit when there is none).
func (o Options) ending(interrupted bool) func() {
	if interrupted && o.Interrupt != nil {
		return o.Interrupt
	}
	return o.Quit
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
