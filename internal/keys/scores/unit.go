// Package scores reads sorted-set scores, and the numbers other keys hold, as times: in which
// unit, and whether they are start times or deadlines.
package scores

import (
	"math"
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// Unit is the unit of the timestamps a sorted set stores as scores.
type Unit string

// The score units; UnitAuto asks for detection from each set's own scores.
const (
	UnitAuto    Unit = "auto"
	UnitSeconds Unit = "s"
	UnitMillis  Unit = "ms"
	UnitMicros  Unit = "us"
	UnitNanos   Unit = "ns"
)

// Units are the units in detection order.
var Units = []Unit{UnitSeconds, UnitMillis, UnitMicros, UnitNanos}

// ParseUnit accepts auto, s, ms, us or ns (--score-unit); anything else is a usage error.
func ParseUnit(s string) (Unit, error) {
	switch u := Unit(s); u {
	case UnitAuto, UnitSeconds, UnitMillis, UnitMicros, UnitNanos:
		return u, nil
	}
	return "", exitcode.Usagef("unknown --score-unit %q: want auto, s, ms, us or ns", s)
}

// nanosPer is how many nanoseconds one unit of u is.
func (u Unit) nanosPer() int64 {
	switch u {
	case UnitSeconds:
		return int64(time.Second)
	case UnitMillis:
		return int64(time.Millisecond)
	case UnitMicros:
		return int64(time.Microsecond)
	case UnitNanos:
		return 1
	}
	return 0
}

// Time reads score as a time in unit u; ok is false when it is not representable as one
// (NaN, infinite, or beyond ±290 years of 1970, the range of time.Duration).
func (u Unit) Time(score float64) (time.Time, bool) {
	per := u.nanosPer()
	if per == 0 || math.IsNaN(score) || math.IsInf(score, 0) {
		return time.Time{}, false
	}
	whole := math.Floor(score)
	if math.Abs(whole)*float64(per) >= math.MaxInt64/2 {
		return time.Time{}, false
	}
	// Whole units and the fraction apart, so a millisecond score stays exact in nanoseconds.
	return time.Unix(0, int64(whole)*per+int64(math.Round((score-whole)*float64(per)))), true
}

// Score is t as a score in unit u, exact to the nanosecond where float64 allows.
func (u Unit) Score(t time.Time) float64 {
	per := u.nanosPer()
	if per == 0 {
		return math.NaN()
	}
	ns := t.UnixNano()
	whole, frac := ns/per, ns%per
	return float64(whole) + float64(frac)/float64(per)
}

// Timestamps are plausible when they fall between ten years before the reference time and one
// day after it (clocks of limiter clients drift a little ahead). The units are a factor 1000
// apart, so at most one unit can put a score inside that range: a millisecond score read as
// seconds lands tens of thousands of years ahead, a second score read as milliseconds in 1970.
const (
	maxPast   = 10 * 365 * 24 * time.Hour
	maxFuture = 24 * time.Hour
)

// Plausible reports whether t could be a limiter timestamp seen at now.
func Plausible(t, now time.Time) bool {
	return !t.Before(now.Add(-maxPast)) && !t.After(now.Add(maxFuture))
}

// DetectUnit finds the unit in which score reads as a plausible timestamp at now: auto
// detection is by magnitude relative to now. ok is false when no unit fits (scores that are
// not timestamps: ranks, counts, prices).
func DetectUnit(score float64, now time.Time) (Unit, bool) {
	for _, u := range Units {
		if t, ok := u.Time(score); ok && Plausible(t, now) {
			return u, true
		}
	}
	return "", false
}

// ResolveUnit is the unit for a set whose newest score is newest: the explicit unit when one is
// given (trusted as is), else the detected one.
func ResolveUnit(want Unit, newest float64, now time.Time) (Unit, bool) {
	if want != "" && want != UnitAuto {
		return want, true
	}
	return DetectUnit(newest, now)
}

// MarshalJSON writes an empty unit as null: the scores were not read as times.
func (u Unit) MarshalJSON() ([]byte, error) { return nullIfEmpty(string(u)) }

func nullIfEmpty(s string) ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return tableprint.Marshal(s)
}
