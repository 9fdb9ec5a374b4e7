package tui

import (
	"time"

	"github.com/limitctl/limitctl/internal/bench"
)

// historyLen bounds what the dashboard remembers per strategy: enough ticks for the widest chart.
const historyLen = 160

// ring is a fixed-size buffer that overwrites its oldest value once full.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest value
	n     int
}

func newRing[T any](size int) ring[T] { return ring[T]{buf: make([]T, size)} }

func (r *ring[T]) push(v T) {
	if len(r.buf) == 0 {
		return
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % len(r.buf)
}

// last returns up to k newest values, oldest first.
func (r *ring[T]) last(k int) []T {
	if k > r.n {
		k = r.n
	}
	if k < 0 {
		k = 0
	}
	out := make([]T, k)
	for i := range k {
		out[i] = r.buf[(r.start+r.n-k+i)%len(r.buf)]
	}
	return out
}

func (r *ring[T]) len() int { return r.n }

// history is what one strategy's charts draw: a value per tick.
type history struct {
	elapsed    ring[time.Duration]
	count      ring[float64] // highest in-flight / per-window count seen in the tick
	throughput ring[float64]
	prevPeak   int64
}

func newHistory() *history {
	return &history{
		elapsed:    newRing[time.Duration](historyLen),
		count:      newRing[float64](historyLen),
		throughput: newRing[float64](historyLen),
	}
}

// add records one tick of a strategy.
func (h *history) add(elapsed time.Duration, s bench.StrategySnapshot) {
	h.elapsed.push(elapsed)
	h.count.push(float64(tickHigh(s, h.prevPeak)))
	h.throughput.push(s.Throughput)
	h.prevPeak = max(h.prevPeak, s.Peak)
}

// span is the time covered by the newest k ticks.
func (h *history) span(k int) time.Duration {
	e := h.elapsed.last(k)
	if len(e) < 2 {
		return 0
	}
	return e[len(e)-1] - e[0]
}

// tickHigh is the highest count a tick saw: the engine's TickPeak when it tracks one, and at
// least the run's peak when that peak was set during this tick, so no overshoot falls between
// two samples of Current.
func tickHigh(s bench.StrategySnapshot, prevPeak int64) int64 {
	high := max(s.Current, s.TickPeak)
	if s.Peak > prevPeak {
		high = max(high, s.Peak)
	}
	return high
}
