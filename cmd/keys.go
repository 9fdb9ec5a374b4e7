package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
)

// keyFlags are the flags inspect and purge share, bound once: how sorted-set scores read and
// whose clock ages and cutoffs are measured against.
type keyFlags struct {
	scoreUnit, scoreMode, clock string
	unit                        keys.ScoreUnit
	scores                      keys.ScoreMode
}

func (k *keyFlags) bind(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&k.scoreUnit, "score-unit", "auto", "unit of sorted-set scores: auto, s, ms, us or ns")
	fl.StringVar(&k.scoreMode, "scores", "auto", "what sorted-set scores mean: start, deadline (when the member expires) or auto")
	fl.StringVar(&k.clock, "clock", "server", "reference time: server (its TIME) or local (this machine's clock)")
	c.RegisterFlagCompletionFunc("score-unit", fixedCompletion("auto", "s", "ms", "us", "ns"))
	c.RegisterFlagCompletionFunc("scores", fixedCompletion("auto\tdeadline when most scores lie in the future, else start",
		"start\ta score is when the member began", "deadline\ta score is when the member expires"))
	c.RegisterFlagCompletionFunc("clock", fixedCompletion("server\tthe server's TIME", "local\tthis machine's clock"))
}

func (k *keyFlags) validate() error {
	var err error
	if k.unit, err = keys.ParseScoreUnit(k.scoreUnit); err != nil {
		return usagef("unknown --score-unit %q: want auto, s, ms, us or ns", k.scoreUnit)
	}
	if k.scores, err = keys.ParseScoreMode(k.scoreMode); err != nil {
		return usagef("unknown --scores %q: want start, deadline or auto", k.scoreMode)
	}
	if k.clock != "server" && k.clock != "local" {
		return usagef("unknown --clock %q: want server (the server's TIME) or local (this machine's clock)", k.clock)
	}
	return nil
}

// clockOf is the reference clock: the server's TIME by default, the factory's clock (time.Now,
// or a fixed time in tests) with --clock local.
func (k *keyFlags) clockOf(f *Factory, rdb redis.UniversalClient) keys.Clock {
	if k.clock == "local" {
		return keys.LocalClock(f.Now)
	}
	server := keys.ServerClock(rdb)
	return func(ctx context.Context) (time.Time, error) {
		t, err := server(ctx)
		if err != nil && ctx.Err() == nil {
			return t, fmt.Errorf("%w (--clock local uses this machine's clock instead)", err)
		}
		return t, err
	}
}
