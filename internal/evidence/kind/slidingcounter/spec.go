package slidingcounter

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Name is the kind's --limiter name.
const Name = "sliding-window-counter"

// Alignment is what the contract says of where the limiter's windows begin.
type Alignment uint8

const (
	// AnyAlignment: the windows may begin anywhere (a grid phased by the limiter's start or a key's
	// first hit), the same phase kept while the limiter's state lives, a new one possible once it is
	// gone (no write for two windows).
	AnyAlignment Alignment = iota
	// EpochAligned: window k is [k·W, (k+1)·W) on the limiter's clock, as a contract that names the
	// window by {window_index} says. Only for stamped decisions: the server's epoch is not the run's.
	EpochAligned
)

// Timing is how the decisions were timed.
type Timing uint8

const (
	// Stamps: the caller passed the limiter its clock (stamped).
	Stamps Timing = iota
	// Intervals: the limiter read a clock of its own (a server's TIME, an application's
	// time.Now) somewhere between the call's sending and its reply (timed).
	Intervals
)

// Spec is the promise a run is judged against, and how its decisions were timed.
type Spec struct {
	Limit  int64
	Window time.Duration
	Align  Alignment
	Timing Timing
	// Grain is the unit the limiter reads its clock in (a millisecond; a second for a script told
	// whole seconds): a time it compares may be rounded by up to that much, either way.
	Grain time.Duration
}

// Validate says what is wrong with s, in one line.
func (s Spec) Validate() error {
	switch {
	case s.Limit < 1:
		return fmt.Errorf("%s: the limit must be at least 1, got %d", Name, s.Limit)
	case s.Window < time.Millisecond:
		return fmt.Errorf("%s: the window must be at least 1ms, got %v", Name, s.Window)
	case s.Grain < 0:
		return fmt.Errorf("%s: the clock's grain must not be negative, got %v", Name, s.Grain)
	case s.Align == EpochAligned && s.Timing == Intervals:
		return errors.New(Name + ": epoch-aligned windows need stamped decisions (the server's epoch is not the run's clock)")
	}
	return nil
}

func (s Spec) windowUs() int64 { return s.Window.Microseconds() }

// grainUs is the rounding allowed on either side of a time the limiter reads.
func (s Spec) grainUs() int64 {
	if s.Grain <= time.Microsecond {
		return 0
	}
	return s.Grain.Microseconds()
}

// ttlUs is the least a correct member's counter of one window lives after its first write, as the
// reference clock measures it: two windows, less the server clock's rate (0.1%) and a millisecond
// of rounding. upstash adds a second to the two windows; a member may add nothing.
func (s Spec) ttlUs() int64 {
	two := 2 * s.windowUs()
	return two - two/1000 - 1000
}

// maxRunUs is the longest a judged admit's [ran from, ran to] may be: a tenth of the window. An
// admit run-timed more loosely is left out of the overshoot evidence (Result.Unjudged), which can
// only take evidence away.
func (s Spec) maxRunUs() int64 { return s.windowUs() / 10 }

// forever stands for a time no decision reaches (a call of unknown outcome may run at any time).
const forever = math.MaxInt64 / 4
