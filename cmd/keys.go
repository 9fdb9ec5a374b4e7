package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/limitctl/limitctl/internal/keys"
	"github.com/limitctl/limitctl/internal/keys/scores"
	"github.com/limitctl/limitctl/internal/tableprint"
)

// The flags of the commands on live limiter keys (inspect, purge, reset), each bound once, and
// how purge and reset ask before they write and print what they wrote.

// openLiveKeys is how inspect, purge and reset start: the output format, the client, and the
// clock ages and cutoffs are measured by.
func openLiveKeys(ctx context.Context, f *Factory, clock keys.ClockName) (tableprint.Format, redis.UniversalClient, keys.Clock, error) {
	format, err := f.Format()
	if err != nil {
		return "", nil, nil, err
	}
	rdb, _, err := f.Client(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	return format, rdb, clock.Clock(rdb, f.Now), nil
}

// clockFlag is --clock: whose clock ages, cutoffs and kinds are measured against.
type clockFlag struct {
	name  string
	clock keys.ClockName
}

func (k *clockFlag) bind(c *cobra.Command, what string) {
	c.Flags().StringVar(&k.name, "clock", string(keys.ClockServer), what+": server (its TIME) or local (this machine's clock)")
	c.RegisterFlagCompletionFunc("clock", fixedCompletion("server\tthe server's TIME", "local\tthis machine's clock"))
}

func (k *clockFlag) validate() (err error) {
	k.clock, err = keys.ParseClockName(k.name)
	return err
}

// scoreFlags are inspect's and purge's --score-unit and --scores, with --clock: how sorted-set
// scores read and against whose clock.
type scoreFlags struct {
	clockFlag
	scoreUnit, scoreMode string
	unit                 scores.Unit
	scores               scores.Mode
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

func (k *scoreFlags) validate() (err error) {
	if k.unit, err = scores.ParseUnit(k.scoreUnit); err != nil {
		return err
	}
	if k.scores, err = scores.ParseMode(k.scoreMode); err != nil {
		return err
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

// printWrite prints what a write on live keys (purge, reset) did. A no to its confirmation is an
// answer, not a failure: exit 0, with the result of nothing under -o json and the note on
// stderr. After a failure, the result of what was done before it, when anything was (wrote):
// the operator must know; with nothing done, the error line alone says it all.
func printWrite(f *Factory, format tableprint.Format, res interface {
	printable
	Err() error
}, wrote bool, err error) error {
	switch {
	case errors.Is(err, keys.ErrNotConfirmed):
		if format == tableprint.FormatJSON {
			if err := writeResult(f.IO.Out, 0, format, res); err != nil {
				return err
			}
		}
		fmt.Fprintf(f.IO.ErrOut, "limitctl: note: %v\n", err)
		return nil
	case err != nil:
		if wrote {
			writeResult(f.IO.Out, f.IO.TerminalWidth(), format, res) //nolint:errcheck // the failure is what to report
		}
		return err
	}
	if err := printResult(f, format, res); err != nil {
		return err
	}
	return res.Err()
}
