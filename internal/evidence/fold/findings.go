package fold

import (
	"cmp"
	"slices"
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/trace"
)

// Findings are what a strategy's evidence found, as every view shows it (a snapshot of the
// engine, judge's strategies, a merged run's).
type Findings struct {
	// Unjudged counts admits left out of the evidence: those that arrived later than the horizon,
	// after their window was judged, and, for the window limiters, those whose reply came a window
	// or more after their own now (the scripts are exact only within one window of their now).
	Unjudged int64
	// Current is in flight now (concurrency) or the newest window's count (windows, bucket).
	Current int64
	// TickPeak is the highest Current since the previous snapshot (0 when the engine does not
	// track it): a short overshoot between two ticks still reaches the dashboard's chart.
	TickPeak       int64
	Peak           int64
	Overshoot      int64
	OvershootEvent int64
	// Early counts an endpoint's admits answered sooner after they were sent than the hold it
	// promises (concurrency): it does not hold its slots that long, and they are no evidence.
	Early int64
	// Windows are what the evidence proved of one window, at the time each count was about, for
	// evidence judged long after (calls judged over their intervals: an HTTP target's, a
	// TIME-reading script's, the records judge reads); nil for the others, and before the final
	// snapshot. The report draws them where the windows were, not where they were judged.
	Windows []WindowCount
	// FirstOvershoot is how the first overshoot happened: the requests behind it with their
	// commands and replies (nil when there was none, or none could be shown). Read-only: the
	// snapshots of one run share it.
	FirstOvershoot *trace.Overshoot
	// CaughtFrom is the evidence's power (overshoot.Evidence.CaughtFrom), once measured: the
	// smallest overshoot per window (for concurrency, held over the limit at once) that this
	// run's evidence would have proven; 0 when none up to PowerSearched(limit) would have been.
	// Nil when it was not measured (live ticks).
	CaughtFrom *int64
	// CaughtFromFirstHit, for a fixed window judged with its alignment unknown, is the power
	// windows anchored at the calls that opened them would have had (--window-start first-hit),
	// where it is better than CaughtFrom; nil otherwise.
	CaughtFromFirstHit *int64
	Refusals
}

// Refusals are what a strategy's refusal judges found.
type Refusals struct {
	// FalseRejects counts refused decisions the evidence proves wrong: at every instant the
	// limiter can have decided, it certainly had room (SPEC section 8). FirstFalseReject is the
	// evidence for the earliest, Tightest the one with the least room left (its numbers hold
	// for all of them); both nil without any.
	FalseRejects     int64
	FirstFalseReject *refusal.FalseReject
	Tightest         *refusal.FalseReject
	// RefusalsUnjudged says why refusals were not judged (other processes may share the keys),
	// or why those from some moment on were not (a master was replaced); empty when all were.
	// NoRefusalJudged: none was, so FalseRejects is no evidence of anything.
	RefusalsUnjudged string
	NoRefusalJudged  bool
}

// PowerSearched is how large an overshoot per window the power is searched up to: twice the
// limit (and at least 2), past the point where a verdict of exact says nothing, but no more than
// maxPowerSearched, so re-judging a run with a limit in the thousands stays quick (each phantom
// is judged as an admit).
func PowerSearched(limit int64) int64 { return min(maxPowerSearched, max(2, 2*limit)) }

// maxPowerSearched bounds the search: a run whose evidence would not have proven 4096 admits
// over the limit per window says so ("not judged"), whatever its limit.
const maxPowerSearched = 4096

// WindowCount is the most admits one window certainly held among the windows starting in a short
// span of time from At (since the run began).
type WindowCount struct {
	At    time.Duration
	Count int64
}

// windowsOf merges the timelines of several keys' evidence (overshoot.Evidence.Timeline), each
// bucket's highest count kept, in time order; nil when none keeps one.
func windowsOf(evidence []*overshoot.Evidence) []WindowCount {
	byAt := map[int64]int64{}
	for _, ev := range evidence {
		for _, c := range ev.Timeline() {
			byAt[c.AtUs] = max(byAt[c.AtUs], c.N)
		}
	}
	if len(byAt) == 0 {
		return nil
	}
	out := make([]WindowCount, 0, len(byAt))
	for at, n := range byAt {
		out = append(out, WindowCount{At: time.Duration(at) * time.Microsecond, Count: n})
	}
	slices.SortFunc(out, func(a, b WindowCount) int { return cmp.Compare(a.At, b.At) })
	return out
}
