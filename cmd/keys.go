package cmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/keys"
)

// Flags and formatting shared by inspect and purge, the two commands on live limiter keys.

// The values of --clock and --score-unit, offered by shell completion.
var (
	clockNames = []string{"server\tthe server's TIME", "local\tthis machine's clock"}
	scoreUnits = []string{"auto", "s", "ms", "us", "ns"}
	scoreModes = []string{"auto\tdeadline when most scores lie in the future, else start", "start\ta score is when the member began",
		"deadline\ta score is when the member expires"}
)

// keyClockFlag is --clock: whose clock ages and cutoffs are measured against.
type keyClockFlag struct{ name string }

func (c *keyClockFlag) validate() error {
	switch c.name {
	case "server", "local":
		return nil
	}
	return usagef("unknown --clock %q: want server (the server's TIME) or local (this machine's clock)", c.name)
}

// clock is the reference clock: the server's TIME by default, the factory's clock (time.Now,
// or a fixed time in tests) with --clock local.
func (c *keyClockFlag) clock(f *Factory, rdb redis.UniversalClient) keys.Clock {
	if c.name == "local" {
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

func parseScoreUnit(s string) (keys.ScoreUnit, error) {
	u, err := keys.ParseScoreUnit(s)
	if err != nil {
		return "", usagef("unknown --score-unit %q: want auto, s, ms, us or ns", s)
	}
	return u, nil
}

func parseScoreMode(s string) (keys.ScoreMode, error) {
	m, err := keys.ParseScoreMode(s)
	if err != nil {
		return "", usagef("unknown --scores %q: want start, deadline or auto", s)
	}
	return m, nil
}

// scoresCell says how a set's scores were read: start, deadline, "deadline (guessed)".
func scoresCell(mode keys.ScoreMode, guessed bool) string {
	if mode == keys.ScoresDeadline && guessed {
		return "deadline (guessed)"
	}
	return string(mode)
}

// notef writes a note (not an error) to stderr.
func notef(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "limitctl: note: "+format+"\n", args...)
}

// humanDuration prints a duration the way an operator reads it: 850ms, 5.5s, 30m, 1h2m3s.
func humanDuration(d time.Duration) string {
	if d < 0 {
		return "-" + humanDuration(-d)
	}
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
	}
	s := d.Round(time.Second).String()
	// 10m0s -> 10m, 1h0m0s -> 1h, 1h0m5s stays.
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// humanBytes prints a byte count with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// promptYes asks a yes/no question on the terminal; only y or yes is a yes. A cancelled
// context (Ctrl-C at the prompt) returns its error.
func promptYes(ctx context.Context, io *IOStreams, question string) (bool, error) {
	fmt.Fprintf(io.ErrOut, "%s [y/N] ", question)
	answer := make(chan string, 1)
	go func() {
		var line strings.Builder
		buf := make([]byte, 1)
		for {
			n, err := io.In.Read(buf)
			if n == 1 && buf[0] != '\n' {
				line.WriteByte(buf[0])
			}
			if err != nil || (n == 1 && buf[0] == '\n') {
				break
			}
		}
		answer <- line.String()
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(io.ErrOut)
		return false, ctx.Err()
	case a := <-answer:
		a = strings.ToLower(strings.TrimSpace(a))
		return a == "y" || a == "yes", nil
	}
}
