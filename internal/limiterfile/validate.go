package limiterfile

import (
	"time"

	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/limiter"
)

// Validate checks the limiter's kind and numbers, whoever states them (hammer's flags, judge's,
// a limiter file under either): a usage error naming the flag of the first no limiter of its
// kind can take. given reports whether a flag was given (nil: none was), for the numbers whose 0
// is their default; an empty kind is left to the caller (judge takes a record file's). What a
// command needs given besides (judge's limit, a hold behind HTTP) is the command's to say.
func (l Limiter) Validate(given func(flag string) bool) error {
	if given == nil {
		given = func(string) bool { return false }
	}
	var kind *limiter.Description
	if l.Kind != "" {
		k, err := limiter.ParseKind(l.Kind)
		if err != nil {
			return exitcode.Usagef("--limiter: %v", err)
		}
		kind = k.Describe()
	}
	windowGiven := l.Window != 0 || given("window")
	staleGiven := l.StaleAfter != 0 || given("stale-after")
	switch {
	case l.Limit < 0:
		return exitcode.Usagef("--limit must be 0 or more, got %d", l.Limit)
	case kind != nil && l.Limit < kind.MinLimit:
		return exitcode.Usagef("--limit is %s and must be at least %d", kind.Limits, kind.MinLimit)
	case l.Hold < 0:
		return exitcode.Usagef("--hold must be 0 or more, got %s", l.Hold)
	case windowGiven && l.Window < time.Millisecond:
		return exitcode.Usagef("--window must be at least 1ms, got %s", l.Window)
	case l.Window > 24*time.Hour:
		return exitcode.Usagef("--window must be at most 24h, got %s", l.Window)
	case l.Window%time.Millisecond != 0:
		// The scripts take whole milliseconds; the evidence would judge a window they never use.
		return exitcode.Usagef("--window must be a whole number of milliseconds, got %s", l.Window)
	case staleGiven && l.StaleAfter < time.Millisecond:
		// The scripts take milliseconds: below one, every call would reclaim every member.
		return exitcode.Usagef("--stale-after must be at least 1ms, got %s", l.StaleAfter)
	case l.StaleAfter%time.Millisecond != 0:
		return exitcode.Usagef("--stale-after must be a whole number of milliseconds, got %s", l.StaleAfter)
	case kind != nil && kind.Releases && given("stale-after") && l.StaleAfter <= l.Hold:
		return exitcode.Usagef("--stale-after %s must be longer than --hold %s: the limiter would reclaim requests still held as abandoned", l.StaleAfter, l.Hold)
	}
	return nil
}
