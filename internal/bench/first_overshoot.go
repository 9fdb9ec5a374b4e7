package bench

import (
	"time"

	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/trace"
)

// How the first overshoot is explained (SPEC section 8, first_overshoot). Each worker records
// its decisions' commands in a trace.Recorder (a ring of its latest admits); a checker that
// finds its first overshoot event says which admits were behind it (overshoot.Moment), and the
// engine looks those up in the rings, once per run. Only what a ring still holds is shown: a
// request whose record a worker had already overwritten is counted as missing, never invented.

// traceFirst publishes the first overshoot of key from the workers' rings; later moments (of
// other keys, or tiers of the same evidence) are not kept.
func (s *strategyState) traceFirst(key int, m overshoot.Moment) {
	if !s.tracing.CompareAndSwap(false, true) {
		return
	}
	var match func(*trace.Record) bool
	switch {
	case m.Held != nil:
		held := make(map[uint64]bool, len(m.Held)) // the held may be many (a limit of thousands)
		for _, id := range m.Held {
			held[id] = true
		}
		match = func(r *trace.Record) bool { return held[r.ID] }
	case m.Interval && s.intervalStamps():
		// Intervals of the stamps' clock (a sliding window on the monotone virtual clock): the
		// admits stamped within the span.
		match = func(r *trace.Record) bool {
			at := (r.StampMs - s.beginMs) * 1000
			return int(r.Key) == key && at >= m.FromUs-999 && at <= m.ToUs
		}
	case m.Interval:
		match = func(r *trace.Record) bool {
			return int(r.Key) == key && r.SentUs >= m.FromUs && r.RepliedUs <= m.ToUs
		}
	default:
		match = func(r *trace.Record) bool {
			return int(r.Key) == key && r.StampMs >= m.FromMs && r.StampMs <= m.ToMs &&
				(m.LateMs == 0 || time.Duration(r.LateNs) <= time.Duration(m.LateMs)*time.Millisecond) // as lateBucket.AdmitLate
		}
	}
	recs := trace.AdmittedOf(s.recorders, nil, match)
	ov := &trace.Overshoot{Limit: s.cfg.Limit, ThisProcess: s.run.Admits != nil || s.run.Witness != nil}
	count := m.Count
	expected := count
	switch {
	case m.Held != nil:
		ov.Held = &count
		expected = int64(len(m.Held)) // this process's: with a shared witness the others hold the rest
		for _, r := range recs {
			if r.ID == m.By {
				ov.AtMs = float64(r.RepliedUs) / 1000
			}
		}
		if ov.AtMs == 0 {
			for _, r := range recs {
				ov.AtMs = max(ov.AtMs, float64(r.RepliedUs)/1000)
			}
		}
	case m.Interval && m.AtUs > 0:
		// Held spans: the requests certainly held at one instant, not admits in a window.
		ov.Held, ov.AtMs = &count, float64(m.AtUs)/1000
	case m.Interval:
		ov.InSpan(count, m.Allowed, float64(m.FromUs)/1000, float64(m.ToUs)/1000)
	default:
		ov.InSpan(count, 0, float64(m.FromMs-s.beginMs), float64(m.ToMs-s.beginMs))
	}
	if m.Shared && m.Held == nil {
		expected = int64(len(recs)) // the others' admits are in their rings, not missing from ours
	}
	ov.Missing = max(0, expected-int64(len(recs)))
	ov.Requests, ov.Omitted = trace.Requests(recs)
	ov.DroppedHeld = ov.Dropped()
	s.firstOver.Store(ov)
}
