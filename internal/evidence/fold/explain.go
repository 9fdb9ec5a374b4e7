package fold

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/trace"
)

// How the first overshoot is explained (SPEC section 8, first_overshoot). A checker that finds its
// first overshoot says which admits were behind it (overshoot.Moment); the source that fed them
// (the engine's trace rings, judge's ring of records) still keeps its latest admits, and the
// explanation looks them up there, once. Only what the source still keeps is shown: an admit it
// no longer keeps is counted as missing, never invented.

// Admit is what the explanation reads of an admit a source kept: its request id, its key, the
// time it was judged at on the stamps (epoch ms) and how late, and its interval (µs since the
// run began).
type Admit struct {
	ID                uint64
	Key               int
	AtMs, LateNs      int64
	SentUs, RepliedUs int64
}

// Kept is what a source kept of the admits it judged.
type Kept interface {
	// Admits are the kept admits match accepts, with the requests behind them as the first
	// overshoot publishes them (at most trace.MaxRequests, the rest counted in omitted).
	Admits(match func(*Admit) bool) (found []Admit, requests []trace.Request, omitted int64)
}

// Explain is how a strategy's first overshoot is told.
type Explain struct {
	Limit int64
	// BeginMs is the run's start on the stamps' clock (epoch ms).
	BeginMs int64
	// TwoClocks: intervals are of the stamps' clock and the real one at once (a sliding window
	// on the monotone virtual clock): the admits are found by their stamps within the span.
	TwoClocks bool
	// ThisProcess: other processes' admits count too (a witness or admits shared between them),
	// so only this process's can be shown.
	ThisProcess bool
}

// Overshoot is the first overshoot m, found on key, as the admits kept behind it.
func (x Explain) Overshoot(key int, m overshoot.Moment, kept Kept) *trace.Overshoot {
	var match func(*Admit) bool
	switch {
	case m.Held != nil:
		held := make(map[uint64]bool, len(m.Held)) // the held may be many (a limit of thousands)
		for _, id := range m.Held {
			held[id] = true
		}
		match = func(a *Admit) bool { return held[a.ID] }
	case m.Interval && x.TwoClocks:
		match = func(a *Admit) bool {
			at := (a.AtMs - x.BeginMs) * 1000
			return a.Key == key && at >= m.FromUs-999 && at <= m.ToUs
		}
	case m.Interval:
		match = func(a *Admit) bool { return a.Key == key && a.SentUs >= m.FromUs && a.RepliedUs <= m.ToUs }
	default:
		match = func(a *Admit) bool {
			return a.Key == key && a.AtMs >= m.FromMs && a.AtMs <= m.ToMs &&
				(m.LateMs == 0 || time.Duration(a.LateNs) <= time.Duration(m.LateMs)*time.Millisecond) // as the bucket's lateness tiers
		}
	}
	found, requests, omitted := kept.Admits(match)
	ov := &trace.Overshoot{Limit: x.Limit, ThisProcess: x.ThisProcess}
	count := m.Count
	expected := count
	switch {
	case m.Held != nil:
		ov.Held = &count
		expected = int64(len(m.Held)) // this process's: with a shared witness the others hold the rest
		for _, a := range found {
			if a.ID == m.By {
				ov.AtMs = float64(a.RepliedUs) / 1000
			}
		}
		if ov.AtMs == 0 {
			for _, a := range found {
				ov.AtMs = max(ov.AtMs, float64(a.RepliedUs)/1000)
			}
		}
	case m.Interval && m.AtUs > 0:
		// Held spans: the requests certainly held at one instant, not admits in a window.
		ov.Held, ov.AtMs = &count, float64(m.AtUs)/1000
	case m.Interval:
		ov.InSpan(count, m.Allowed, float64(m.FromUs)/1000, float64(m.ToUs)/1000)
	default:
		ov.InSpan(count, 0, float64(m.FromMs-x.BeginMs), float64(m.ToMs-x.BeginMs))
	}
	if m.Shared && m.Held == nil {
		expected = int64(len(found)) // the others' admits are in their sources, not missing from this one
	}
	ov.Missing = max(0, expected-int64(len(found)))
	ov.Requests, ov.Omitted = requests, omitted
	ov.DroppedHeld = ov.Dropped()
	return ov
}
