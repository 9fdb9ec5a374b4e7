package scores

import (
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
)

// Mode says what a sorted set's scores mean.
type Mode string

// The score modes. A start score is when a member began (limitctl's sets, most limiters); a
// deadline score is when it expires (now + a timeout, as sidekiq-throttled keeps its jobs).
// ModeAuto reads each set's own scores: deadlines when most of them lie in the future.
const (
	ModeAuto Mode = "auto"
	Start    Mode = "start"
	Deadline Mode = "deadline"
)

// ParseMode accepts start, deadline or auto (--scores); anything else is a usage error.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, Start, Deadline:
		return m, nil
	}
	return "", exitcode.Usagef("unknown --scores %q: want start, deadline or auto", s)
}

// futureSkew is how far ahead of now a start score may lie without counting as a deadline:
// client clocks run a little ahead of the server's.
const futureSkew = time.Second

// DeadlineFuture is how far ahead a deadline may lie: a lease or a lost-job threshold of
// hours or days, never years.
const DeadlineFuture = 400 * 24 * time.Hour

// SampleRanks are the ranks whose scores decide a set's unit and score mode: the oldest, the
// newest and three between, so that one odd member cannot decide alone and a set whose scores
// mix units (the lowest are seconds, the highest milliseconds) is caught at its ends.
func SampleRanks(size int64) []int64 {
	if size <= 0 {
		return nil
	}
	ranks := []int64{0}
	for _, q := range []int64{1, 2, 3} {
		if r := size * q / 4; r > ranks[len(ranks)-1] && r < size-1 {
			ranks = append(ranks, r)
		}
	}
	if size > 1 {
		ranks = append(ranks, size-1)
	}
	return ranks
}

// Reading is how a set's scores are read: the unit and what they mean.
type Reading struct {
	Unit    Unit
	Mode    Mode
	Guessed bool // the mode was guessed by --scores auto
}

// Read decides the unit and the mode of a set from sampled scores (oldest first). An
// explicit unit is trusted as is; auto needs every sample to be a plausible time in one unit
// (a set that mixes units, or holds ranks or prices, is not read as times: ok is false).
// Deadlines may lie up to DeadlineFuture ahead, start times only futureSkew-ish (maxFuture).
// Auto mode reads deadlines when more than half of the samples lie in the future.
func Read(samples []float64, now time.Time, unit Unit, mode Mode) (Reading, bool) {
	if len(samples) == 0 {
		return Reading{}, false
	}
	future := DeadlineFuture
	if mode == Start {
		future = maxFuture
	}
	if unit == "" || unit == UnitAuto {
		var ok bool
		if unit, ok = detectUnitAll(samples, now, future); !ok {
			return Reading{}, false
		}
	}
	rd := Reading{Unit: unit, Mode: mode}
	if mode == "" || mode == ModeAuto {
		ahead := 0
		for _, s := range samples {
			if t, ok := unit.Time(s); ok && t.After(now.Add(futureSkew)) {
				ahead++
			}
		}
		rd.Mode, rd.Guessed = Start, true
		if ahead*2 > len(samples) {
			rd.Mode = Deadline
		}
	}
	return rd, true
}

// detectUnitAll finds the one unit in which every score is a plausible time at now, with
// times up to future ahead allowed.
func detectUnitAll(scores []float64, now time.Time, future time.Duration) (Unit, bool) {
	for _, u := range Units {
		all := true
		for _, s := range scores {
			t, ok := u.Time(s)
			all = all && ok && !t.Before(now.Add(-maxPast)) && !t.After(now.Add(future))
		}
		if all {
			return u, true
		}
	}
	return "", false
}

// MixedUnits reports whether every score is a time in some unit, but not all in the same one.
func MixedUnits(scores []float64, now time.Time) bool {
	seen := map[Unit]bool{}
	for _, s := range scores {
		u, ok := detectUnitAll([]float64{s}, now, DeadlineFuture)
		if !ok {
			return false
		}
		seen[u] = true
	}
	return len(seen) > 1
}

// MarshalJSON writes an empty mode as null: the scores were not examined.
func (m Mode) MarshalJSON() ([]byte, error) { return nullIfEmpty(string(m)) }
