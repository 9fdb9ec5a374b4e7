package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
)

// The flags of the commands on live limiter keys (inspect, purge, reset), each bound once.

// clockFlag is --clock: whose clock ages, cutoffs and kinds are measured against.
type clockFlag struct{ name string }

func (k *clockFlag) bind(c *cobra.Command, what string) {
	c.Flags().StringVar(&k.name, "clock", "server", what+": server (its TIME) or local (this machine's clock)")
	c.RegisterFlagCompletionFunc("clock", fixedCompletion("server\tthe server's TIME", "local\tthis machine's clock"))
}

func (k *clockFlag) validate() error {
	if k.name != "server" && k.name != "local" {
		return usagef("unknown --clock %q: want server (the server's TIME) or local (this machine's clock)", k.name)
	}
	return nil
}

// clockOf is the reference clock: the server's TIME by default, the factory's clock (time.Now,
// or a fixed time in tests) with --clock local.
func (k *clockFlag) clockOf(f *Factory, rdb redis.UniversalClient) keys.Clock {
	if k.name == "local" {
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

// scoreFlags are inspect's and purge's --score-unit and --scores, with --clock: how sorted-set
// scores read and against whose clock.
type scoreFlags struct {
	clockFlag
	scoreUnit, scoreMode string
	unit                 keys.ScoreUnit
	scores               keys.ScoreMode
}

func (k *scoreFlags) bind(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&k.scoreUnit, "score-unit", "auto", "unit of sorted-set scores: auto, s, ms, us or ns")
	fl.StringVar(&k.scoreMode, "scores", "auto", "what sorted-set scores mean: start, deadline (when the member expires) or auto")
	k.clockFlag.bind(c, "reference time")
	c.RegisterFlagCompletionFunc("score-unit", fixedCompletion("auto", "s", "ms", "us", "ns"))
	c.RegisterFlagCompletionFunc("scores", fixedCompletion("auto\tdeadline when most scores lie in the future, else start",
		"start\ta score is when the member began", "deadline\ta score is when the member expires"))
}

func (k *scoreFlags) validate() error {
	var err error
	if k.unit, err = keys.ParseScoreUnit(k.scoreUnit); err != nil {
		return usagef("unknown --score-unit %q: want auto, s, ms, us or ns", k.scoreUnit)
	}
	if k.scores, err = keys.ParseScoreMode(k.scoreMode); err != nil {
		return usagef("unknown --scores %q: want start, deadline or auto", k.scoreMode)
	}
	return k.clockFlag.validate()
}

// confirmPattern is the confirmation a command on live keys asks before it writes to the keys a
// pattern matched: nil when nothing needs asking (--yes, a dry run, only literal keys), a usage
// error when it cannot be asked (no terminal), decided before anything connects.
func confirmPattern(c *cobra.Command, f *Factory, args []string, yes bool, what string) (func(string) (bool, error), error) {
	for _, a := range args {
		if !keys.IsPattern(a) || yes {
			continue
		}
		if !(f.IO.StdinTTY && f.IO.StdoutTTY) {
			return nil, usagef("%s is a pattern: add --yes to %s it matches (try --dry-run first)", a, what)
		}
		return func(question string) (bool, error) { return f.IO.Confirm(c.Context(), question) }, nil
	}
	return nil, nil
}
