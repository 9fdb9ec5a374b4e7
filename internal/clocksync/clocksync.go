// Package clocksync places a process's monotonic clock on a Redis server's TIME timeline with a
// bound, so that the events of several processes can be ordered on one timeline.
package clocksync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// MaxDrift is the most two clocks' rates are assumed to differ by: 500 ppm, the most the kernel
// slews a clock NTP disciplines (the rate of CLOCK_MONOTONIC, and of the server's CLOCK_REALTIME
// between steps). Every offset is widened by it for the time between its measurement and its use.
const MaxDrift = 500e-6

// A Sample is one TIME round trip: Sent and Answered are µs since the Clock's base on the local
// monotonic clock, Server the answer in µs since the epoch. TIME truncates to whole µs, so the
// server's clock read somewhere in [Server, Server+1) at one instant in [Sent, Answered].
type Sample struct {
	Sent, Answered, Server int64
}

// RTT is the sample's round trip in µs.
func (s Sample) RTT() int64 { return s.Answered - s.Sent }

// Reader asks the server for its TIME.
type Reader func(ctx context.Context) (time.Time, error)

// ErrStepped says the samples disagree beyond the drift allowance: a clock stepped (the server's
// wall clock was set, or a VM was paused) between them, so no one offset holds for the run.
var ErrStepped = errors.New("clocksync: the server's clock and this one disagree beyond drift (a clock stepped)")

// A Clock maps local instants to the server's timeline. The offset o = server − local (µs) is the
// same for every instant but for drift. A sample proves, at its instant m in [Sent, Answered]:
//
//	Server ≤ local(m) + o < Server+1, local(m) ∈ [Sent, Answered]
//	⇒ o ∈ [Server − Answered, Server + 1 − Sent].
//
// At another local instant t the offset may have moved by at most MaxDrift·|t − m|, and
// |t − m| ≤ |t − mid| + RTT/2, so each sample bounds o(t) by its interval widened by that much.
// Every sample's bound holds, so their intersection holds: the bound is the tightest of them,
// and an empty intersection proves a step (ErrStepped). A step smaller than the bounds' widths
// can go unseen: that is the stated limit of the method.
type Clock struct {
	base time.Time
	mu   sync.Mutex
	best []Sample // the shortest round trip of each Measure call, in time order
	err  error
}

// New starts a Clock whose local instants are µs since base (the run's start).
func New(base time.Time) *Clock { return &Clock{base: base} }

// Local is the µs since the base of a local time.
func (c *Clock) Local(t time.Time) int64 { return t.Sub(c.base).Microseconds() }

// Measure sends n TIME round trips one after another and keeps the shortest (whose bound is the
// tightest). A failed round trip ends it with the error; a sample that contradicts the earlier
// ones marks the clock stepped.
func (c *Clock) Measure(ctx context.Context, read Reader, n int) error {
	var best Sample
	found := false
	for range max(n, 1) {
		sent := time.Now()
		st, err := read(ctx)
		answered := time.Now()
		if err != nil {
			return fmt.Errorf("clocksync: TIME: %w", err)
		}
		s := Sample{Sent: c.Local(sent), Answered: c.Local(answered) + 1, Server: st.UnixMicro()}
		if !found || s.RTT() < best.RTT() {
			best, found = s, true
		}
	}
	c.Add(best)
	return c.Err()
}

// Add records a sample (from Measure, or from a test with a clock of its own).
func (c *Clock) Add(s Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.best = append(c.best, s)
	if c.err == nil {
		if _, _, ok := c.boundLocked(s.Sent); !ok {
			c.err = ErrStepped
		}
	}
}

// Err is ErrStepped once the samples have disagreed, else nil.
func (c *Clock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Samples is how many samples the clock holds.
func (c *Clock) Samples() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.best)
}

// Last is the latest sample the clock holds; ok is false with none.
func (c *Clock) Last() (s Sample, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.best) == 0 {
		return Sample{}, false
	}
	return c.best[len(c.best)-1], true
}

// Offset bounds the offset (server − local, µs) at the local instant t: o(t) ∈ [lo, hi]. ok is
// false with no sample, or once the samples have disagreed.
func (c *Clock) Offset(t int64) (lo, hi int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, 0, false
	}
	return c.boundLocked(t)
}

// ToServer places the local interval [from, to] (µs since base) on the server's timeline, widened
// by the offset's bound at each end: the interval certainly holds the same instants there.
func (c *Clock) ToServer(from, to int64) (lo, hi int64, ok bool) {
	l1, _, ok1 := c.Offset(from)
	_, h2, ok2 := c.Offset(to)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	return from + l1, to + h2, true
}

// Width is the bound's width at t in µs: how far apart two processes' views of one instant can
// be, from this process's side. -1 when unknown.
func (c *Clock) Width(t int64) int64 {
	lo, hi, ok := c.Offset(t)
	if !ok {
		return -1
	}
	return hi - lo
}

func (c *Clock) boundLocked(t int64) (lo, hi int64, ok bool) {
	if len(c.best) == 0 {
		return 0, 0, false
	}
	for i, s := range c.best {
		mid := (s.Sent + s.Answered) / 2
		dist := t - mid
		if dist < 0 {
			dist = -dist
		}
		widen := int64(MaxDrift*float64(dist+s.RTT()/2+1)) + 1
		l, h := s.Server-s.Answered-widen, s.Server+1-s.Sent+widen
		if i == 0 || l > lo {
			lo = l
		}
		if i == 0 || h < hi {
			hi = h
		}
	}
	return lo, hi, lo <= hi
}
