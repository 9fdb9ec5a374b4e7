package keys

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/exitcode"
)

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
