package redisconn

import (
	"bufio"
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
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
	masters, err := Masters(ctx, rdb)
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
