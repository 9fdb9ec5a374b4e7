package bench

import (
	"slices"

	"github.com/limitctl/limitctl/internal/redisconn"
)

// attributeServerTime gives each strategy Redis's time per decision over the run: the usec its
// own commands took, divided by its decisions. A strategy whose commands another running strategy
// also sends (or runs inside a script) cannot be told apart, and gets nil rather than a guess.
func attributeServerTime(strategies []StrategyRun, before, after map[string]redisconn.CmdStat, runs []*strategyState) []*float64 {
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
