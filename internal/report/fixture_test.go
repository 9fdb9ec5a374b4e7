package report

import (
	"encoding/json"
	"math"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

const (
	fixtureLimit = 20
	fixtureTick  = 100 * time.Millisecond
)

// fixtureSnapshots is a deterministic 10s run of naive (overshooting) and lua (holding).
func fixtureSnapshots(ticks int) []bench.Snapshot {
	var out []bench.Snapshot
	var naivePeak, naiveEvents int64
	for i := 1; i <= ticks; i++ {
		wave := (math.Sin(float64(i)*0.37) + 0.6*math.Sin(float64(i)*1.13) + 1.6) / 3.2 // 0..1
		naiveHigh := int64(19 + math.Round(10*wave*wave*wave))
		if naiveHigh > fixtureLimit {
			naiveEvents++
		}
		naivePeak = max(naivePeak, naiveHigh)
		elapsed := time.Duration(i) * fixtureTick
		out = append(out, bench.Snapshot{
			Limiter: limiter.Concurrency, Limit: fixtureLimit, Workers: 64, Elapsed: elapsed,
			Strategies: []bench.StrategySnapshot{
				{
					Name:       "naive",
					Contended:  naivePeak >= fixtureLimit,
					Throughput: 7000 + 800*wave,
					Latency:    bench.Latency{P50: time.Duration(1100+200*wave) * time.Microsecond, P99: time.Duration(4000+900*wave) * time.Microsecond},
					Findings:   fold.Findings{Current: 18, TickPeak: naiveHigh, Peak: naivePeak, Overshoot: max(0, naivePeak-fixtureLimit), OvershootEvent: naiveEvents},
				},
				{
					Name: "lua", Contended: true,
					Throughput: 5600 + 500*wave,
					Latency:    bench.Latency{P50: time.Duration(1200+150*wave) * time.Microsecond, P99: time.Duration(4400+700*wave) * time.Microsecond},
					Findings:   fold.Findings{Current: 19, TickPeak: fixtureLimit, Peak: fixtureLimit},
				},
			},
		})
	}
	return out
}

func fixtureData() Data {
	snaps := fixtureSnapshots(100)
	rec := NewRecorder(0)
	for _, s := range snaps {
		rec.Add(s)
	}
	server := 6.4
	last := snaps[len(snaps)-1]
	naive, lua := last.Strategies[0], last.Strategies[1]
	naive.Attempts, naive.Admitted, naive.Rejected, naive.Errors = 73_410, 45_120, 27_990, 300
	naive.ErrorsByKind = map[string]int64{"timeout": 280, "conn": 20}
	naive.AvgThroughput = 7341
	naive.Latency = bench.Latency{P50: 1234 * time.Microsecond, P90: 2600 * time.Microsecond, P99: 4870 * time.Microsecond, P999: 9450 * time.Microsecond, Max: 23 * time.Millisecond}
	naive.FirstOvershoot = fixtureRace()
	lua.Attempts, lua.Admitted, lua.Rejected = 58_120, 35_900, 22_220
	lua.AvgThroughput = 5812
	lua.ServerUsecPerCall = &server
	lua.Latency = bench.Latency{P50: 1220 * time.Microsecond, P90: 2500 * time.Microsecond, P99: 4330 * time.Microsecond, P999: 10300 * time.Microsecond, Max: 19 * time.Millisecond}
	return Data{
		Summary: bench.Summary{
			RunID: "r-7f3a", Target: bench.Target{Kind: "redis-server", Addr: "127.0.0.1:41234"},
			Limiter: limiter.Concurrency, Limit: fixtureLimit, Workers: 64, Duration: 10 * time.Second,
			Strategies: []bench.StrategySnapshot{naive, lua},
		},
		Series: rec.Series(),
		Assertions: []Assertion{
			{Expr: "lua.overshoot==0", Passed: true, Actual: "0"},
			{Expr: "naive.overshoot>0", Passed: true, Actual: "9"},
			{Expr: "lua.p99<4ms", Passed: false, Actual: "4.33ms"},
		},
	}
}

// fixtureRace is the article's race as a trace publishes it: r4117 and r4120 both count 19,
// then both add; r4099 was held all along; 21 held, limit 20.
func fixtureRace() *trace.Overshoot {
	held := int64(21)
	step := func(op, phase, reply string, sent, replied int64) trace.StepOut {
		return trace.StepOut{Op: op, Phase: phase, Reply: json.RawMessage(reply), SentUs: sent, RepliedUs: replied}
	}
	naive := func(id string, worker int, raced bool, seen string, at int64) trace.Request {
		return trace.Request{ID: id, Worker: worker, Raced: raced, Steps: []trace.StepOut{
			step("ZREMRANGEBYSCORE", "prune", "0", at, at+60), step("ZCARD", "check", seen, at+62, at+120),
			step("ZADD", "write", "1", at+310, at+390), step("PEXPIRE", "expire", "1", at+392, at+450),
		}}
	}
	return &trace.Overshoot{AtMs: 3200.45, Held: &held, Limit: fixtureLimit, Omitted: 18, Requests: []trace.Request{
		naive("r4099", 35, false, "17", 3_199_000),
		naive("r4117", 53, true, "19", 3_200_000),
		naive("r4120", 56, true, "19", 3_200_020),
	}}
}
