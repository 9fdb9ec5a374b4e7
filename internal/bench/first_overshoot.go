package bench

import (
	"time"

	"github.com/limitctl/limitctl/internal/trace"
)

// How the first overshoot is explained (SPEC section 8, first_overshoot). Each worker records
// its decisions' commands in a trace.Recorder (a ring of its latest admits); a checker that
// finds its first overshoot event says which admits were behind it (overMoment), and the
// engine looks those up in the rings, once per run. Only what a ring still holds is shown: a
// request whose record a worker had already overwritten is counted as missing, never invented.

// overMoment is what a checker saw when it first found more than the limit: how many, and
// which admits: the held requests by id (concurrency), the admits stamped in [fromMs, toMs]
// (windows and bucket on the stamps, epoch ms), or those sent at or after fromUs and answered
// by toUs (interval evidence, µs since the run began).
type overMoment struct {
	count    int64
	held     []uint64
	by       uint64 // concurrency: the admit that raised the count above the limit
	fromMs   int64
	toMs     int64
	interval bool
	fromUs   int64
	toUs     int64
	// lateMs, when set, is the bucket tier's bound: only admits at most that late were counted.
	lateMs int64
	// shared: the count holds other processes' admits too (the joint evidence of SharedAdmits,
	// a Redis witness), so only this process's can be shown and none is missing for it.
	shared bool
}

// firstOverReporter is a checker that can say what was behind its first overshoot event: it
// calls report once, when it finds it (under its own lock, so report must not call back).
type firstOverReporter interface {
	onFirstOver(report func(overMoment))
}

// traceFirst publishes the first overshoot of key from the workers' rings; later moments (of
// other keys, or tiers of the same evidence) are not kept.
func (s *strategyState) traceFirst(key int, m overMoment) {
	if !s.tracing.CompareAndSwap(false, true) {
		return
	}
	var match func(*trace.Record) bool
	switch {
	case m.held != nil:
		held := make(map[uint64]bool, len(m.held)) // the held may be many (a limit of thousands)
		for _, id := range m.held {
			held[id] = true
		}
		match = func(r *trace.Record) bool { return held[r.ID] }
	case m.interval && s.intervalStamps():
		// Intervals of the stamps' clock (a sliding window on the monotone virtual clock): the
		// admits stamped within the span.
		match = func(r *trace.Record) bool {
			at := (r.StampMs - s.beginMs) * 1000
			return int(r.Key) == key && at >= m.fromUs-999 && at <= m.toUs
		}
	case m.interval:
		match = func(r *trace.Record) bool {
			return int(r.Key) == key && r.SentUs >= m.fromUs && r.RepliedUs <= m.toUs
		}
	default:
		match = func(r *trace.Record) bool {
			return int(r.Key) == key && r.StampMs >= m.fromMs && r.StampMs <= m.toMs &&
				(m.lateMs == 0 || time.Duration(r.LateNs) <= time.Duration(m.lateMs)*time.Millisecond) // as lateBucket.AdmitLate
		}
	}
	var recs []trace.Record
	for _, rec := range s.recorders {
		recs = rec.Admitted(recs, match)
	}
	ov := &trace.Overshoot{Limit: s.cfg.Limit, ThisProcess: s.run.Admits != nil || s.run.Witness != nil}
	count := m.count
	expected := count
	switch {
	case m.held != nil:
		ov.Held = &count
		expected = int64(len(m.held)) // this process's: with a shared witness the others hold the rest
		for _, r := range recs {
			if r.ID == m.by {
				ov.AtMs = float64(r.RepliedUs) / 1000
			}
		}
		if ov.AtMs == 0 {
			for _, r := range recs {
				ov.AtMs = max(ov.AtMs, float64(r.RepliedUs)/1000)
			}
		}
	case m.interval:
		ov.InWindow = &count
		from, to := float64(m.fromUs)/1000, float64(m.toUs)/1000
		ov.FromMs, ov.ToMs, ov.AtMs = &from, &to, to
	default:
		ov.InWindow = &count
		from, to := float64(m.fromMs-s.beginMs), float64(m.toMs-s.beginMs)
		ov.FromMs, ov.ToMs, ov.AtMs = &from, &to, to
	}
	if m.shared && m.held == nil {
		expected = int64(len(recs)) // the others' admits are in their rings, not missing from ours
	}
	ov.Missing = max(0, expected-int64(len(recs)))
	ov.Requests, ov.Omitted = trace.Requests(recs)
	s.firstOver.Store(ov)
}
