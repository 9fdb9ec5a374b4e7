package bench

import (
	"bufio"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/limitctl/limitctl/internal/redisconn"
)

// CmdStat is one line of INFO commandstats: how often a command ran and for how long in total.
type CmdStat struct {
	Calls int64
	Usec  int64
}

// ParseCommandStats reads the commandstats section of INFO.
func ParseCommandStats(info string) map[string]CmdStat {
	out := map[string]CmdStat{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		var st CmdStat
		for _, field := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usec = n
			}
		}
		out[strings.ToLower(name)] = st
	}
	return out
}

// CommandStats sums INFO commandstats over every master of the target.
func CommandStats(ctx context.Context, rdb redis.UniversalClient) (map[string]CmdStat, error) {
	masters, err := redisconn.Masters(ctx, rdb)
	if err != nil {
		return nil, err
	}
	total := map[string]CmdStat{}
	for _, m := range masters {
		info, err := m.Info(ctx, "commandstats").Result()
		if err != nil {
			return nil, err
		}
		for name, st := range ParseCommandStats(info) {
			t := total[name]
			t.Calls += st.Calls
			t.Usec += st.Usec
			total[name] = t
		}
	}
	if len(total) == 0 {
		return nil, errNoStats
	}
	return total, nil
}

var errNoStats = errors.New("the server reports no commandstats")

// attributeServerTime gives each strategy Redis's time per decision over the run: the usec its
// own commands took, divided by its decisions. A strategy whose commands another running strategy
// also sends (or runs inside a script) cannot be told apart, and gets nil rather than a guess.
func attributeServerTime(strategies []StrategyRun, before, after map[string]CmdStat, runs []*strategyState) []*float64 {
	out := make([]*float64, len(strategies))
	if before == nil || after == nil {
		return out
	}
	for i, s := range strategies {
		shared := false
		for j, other := range strategies {
			if i == j {
				continue
			}
			for _, c := range s.Commands {
				if slices.Contains(other.Commands, c) || slices.Contains(other.Inner, c) {
					shared = true
				}
			}
		}
		decisions := runs[i].attempts.Load()
		if shared || decisions == 0 {
			continue
		}
		var usec int64
		for _, c := range s.Commands {
			usec += after[c].Usec - before[c].Usec
		}
		v := round3(float64(usec) / float64(decisions))
		out[i] = &v
	}
	return out
}
