package bench

import (
	"context"
	"time"
)

// pace emits the scheduled start of every request at the open-loop rate. When workers fall
// behind, the schedule does not slip: latency is measured from the scheduled start, so the
// queueing shows (no coordinated omission).
func (s *strategyState) pace(ctx context.Context, e *Engine, schedule chan<- time.Time, begin time.Time) {
	interval := time.Duration(float64(time.Second) / s.cfg.OpenRate)
	next := begin
	for {
		if s.gate != nil {
			if ok, wait := s.gate.take(); !ok {
				if !wait || !s.gate.wait(ctx) {
					return
				}
				next = time.Now() // a wait for the engine's word is not a backlog
				continue
			}
		}
		if e.paused.Load() {
			if !e.waitIfPaused(ctx) {
				return
			}
			next = time.Now() // a pause is not a backlog
		}
		if idleUntil, idle := idleSpell(s.cfg, next.Sub(begin)); idle {
			next = begin.Add(idleUntil) // no requests are due in an idle spell
		}
		if d := time.Until(next); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		select {
		case schedule <- next:
		case <-ctx.Done():
			return
		}
		next = next.Add(interval)
	}
}

// sleepCtx sleeps for d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
