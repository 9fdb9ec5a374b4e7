package keys

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// ScoreUnit is the unit of the timestamps a sorted set stores as scores.
type ScoreUnit string

// The score units; UnitAuto asks for detection from each set's own scores.
const (
	UnitAuto    ScoreUnit = "auto"
	UnitSeconds ScoreUnit = "s"
	UnitMillis  ScoreUnit = "ms"
	UnitMicros  ScoreUnit = "us"
	UnitNanos   ScoreUnit = "ns"
)

// units in detection order.
var units = []ScoreUnit{UnitSeconds, UnitMillis, UnitMicros, UnitNanos}

// ParseScoreUnit accepts auto, s, ms, us or ns (--score-unit); anything else is a usage error.
func ParseScoreUnit(s string) (ScoreUnit, error) {
	switch u := ScoreUnit(s); u {
	case UnitAuto, UnitSeconds, UnitMillis, UnitMicros, UnitNanos:
		return u, nil
	}
	return "", exitcode.Usagef("unknown --score-unit %q: want auto, s, ms, us or ns", s)
}

// nanosPer is how many nanoseconds one unit of u is.
func (u ScoreUnit) nanosPer() int64 {
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
func (u ScoreUnit) Time(score float64) (time.Time, bool) {
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
func (u ScoreUnit) Score(t time.Time) float64 {
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
func DetectUnit(score float64, now time.Time) (ScoreUnit, bool) {
	for _, u := range units {
		if t, ok := u.Time(score); ok && Plausible(t, now) {
			return u, true
		}
	}
	return "", false
}

// resolveUnit is the unit for a set whose newest score is newest: the explicit unit when one is
// given (trusted as is), else the detected one.
func resolveUnit(want ScoreUnit, newest float64, now time.Time) (ScoreUnit, bool) {
	if want != "" && want != UnitAuto {
		return want, true
	}
	return DetectUnit(newest, now)
}

// Clock gives the reference time that ages, staleness and purge cutoffs are measured from.
type Clock func(ctx context.Context) (time.Time, error)

// ServerClock reads the server's TIME, so that every operator measures against the same clock
// whatever their laptop says. On a cluster go-redis sends TIME to one node. Its error, but for
// a cancelled call's, says how to do without it.
func ServerClock(rdb redis.UniversalClient) Clock {
	return func(ctx context.Context) (time.Time, error) {
		t, err := rdb.Time(ctx).Result()
		if err != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("%w (--clock local uses this machine's clock instead)", err)
			}
			return time.Time{}, fmt.Errorf("TIME: %w", err)
		}
		return t, nil
	}
}

// ClockName is whose clock a command on live keys measures against (--clock).
type ClockName string

// The clock names: ClockServer reads the server's TIME (ServerClock), ClockLocal this machine's
// clock (LocalClock).
const (
	ClockServer ClockName = "server"
	ClockLocal  ClockName = "local"
)

// ParseClockName accepts server or local; anything else is a usage error.
func ParseClockName(s string) (ClockName, error) {
	if n := ClockName(s); n == ClockServer || n == ClockLocal {
		return n, nil
	}
	return "", exitcode.Usagef("unknown --clock %q: want server (the server's TIME) or local (this machine's clock)", s)
}

// Clock is the named clock: the server's TIME on rdb, or now.
func (n ClockName) Clock(rdb redis.UniversalClient, now func() time.Time) Clock {
	if n == ClockLocal {
		return LocalClock(now)
	}
	return ServerClock(rdb)
}

// LocalClock uses the client's clock: now is time.Now in the program, a fixed time in tests.
func LocalClock(now func() time.Time) Clock {
	return func(context.Context) (time.Time, error) { return now(), nil }
}
