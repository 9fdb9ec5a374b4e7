package tui

import (
	"encoding/json"
	"math"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/trace"
)

// The synthetic run every dashboard test draws: a concurrency limit of 20, 64 workers for 10s,
// one snapshot every 100ms, deterministic numbers.
const (
	fixtureLimit = 20
	fixtureTick  = 100 * time.Millisecond
	fixtureTotal = 10 * time.Second
)

// strategyShape says how a synthetic strategy behaves.
type strategyShape struct {
	name      string
	overshoot bool    // naive: spikes through the limit
	errorRate float64 // share of decisions that fail
	server    float64 // µs per call; 0 means unknown (nil)
	retries   bool
	tooStrict bool // refuses with room: false rejects from a third of the run on
}

// wave is a deterministic stand-in for noise: a mix of incommensurate sines in [0, 1].
func wave(i int, seed float64) float64 {
	x := float64(i)
	v := math.Sin(x*0.37+seed) + 0.6*math.Sin(x*1.13+2*seed) + 0.3*math.Sin(x*2.71+3*seed)
	return (v/1.9 + 1) / 2
}

// fixtureRun produces the snapshots of ticks 1..n.
func fixtureRun(n int, shapes ...strategyShape) []bench.Snapshot {
	type totals struct {
		attempts, admitted, rejected, errors, retries, peak, events int64
	}
	acc := make([]totals, len(shapes))
	var out []bench.Snapshot
	for i := 1; i <= n; i++ {
		elapsed := time.Duration(i) * fixtureTick
		snap := bench.Snapshot{
			Target:   bench.Target{Kind: "redis-server", Addr: "127.0.0.1:41234"},
			Limiter:  "concurrency",
			Limit:    fixtureLimit,
			Workers:  64,
			Elapsed:  elapsed,
			Total:    fixtureTotal,
			Progress: float64(elapsed) / float64(fixtureTotal),
		}
		for k, sh := range shapes {
			seed := float64(k) * 1.7
			rate := 5200 + 900*wave(i, seed)
			if sh.name == "naive" {
				rate += 1800
			}
			decisions := int64(rate * fixtureTick.Seconds())
			errs := int64(float64(decisions) * sh.errorRate)
			current := int64(fixtureLimit - 3 + math.Round(3*wave(i, seed+0.5)))
			tickPeak := int64(fixtureLimit)
			if sh.overshoot {
				spike := wave(i, seed+1.1)
				tickPeak = fixtureLimit - 1 + int64(math.Round(12*spike*spike))
				current = min(current, tickPeak)
			}
			a := &acc[k]
			a.attempts += decisions
			a.errors += errs
			admitted := (decisions - errs) * 62 / 100
			a.admitted += admitted
			a.rejected += decisions - errs - admitted
			if sh.retries {
				a.retries += decisions / 7
			}
			if tickPeak > fixtureLimit {
				a.events++
			}
			a.peak = max(a.peak, tickPeak)
			s := bench.StrategySnapshot{
				Name:          sh.name,
				Attempts:      a.attempts,
				Admitted:      a.admitted,
				Rejected:      a.rejected,
				Errors:        a.errors,
				Retries:       a.retries,
				Contended:     a.rejected > 0 || a.peak >= fixtureLimit, // as the engine decides it
				Throughput:    rate,
				AvgThroughput: float64(a.attempts) / elapsed.Seconds(),
				Latency: bench.Latency{
					P50:  time.Duration(1100+200*wave(i, seed+2)) * time.Microsecond,
					P90:  time.Duration(2600+300*wave(i, seed+3)) * time.Microsecond,
					P99:  time.Duration(4300+900*wave(i, seed+4)) * time.Microsecond,
					P999: time.Duration(9100+2000*wave(i, seed+5)) * time.Microsecond,
					Max:  23 * time.Millisecond,
				},
				Findings: fold.Findings{Current: current, TickPeak: tickPeak, Peak: a.peak, Overshoot: max(0, a.peak-fixtureLimit), OvershootEvent: a.events},
			}
			if errs > 0 {
				s.ErrorsByKind = map[string]int64{"timeout": a.errors * 3 / 4, "conn": a.errors - a.errors*3/4}
			}
			if sh.server > 0 {
				v := sh.server
				s.ServerUsecPerCall = &v
			}
			if sh.tooStrict && i > n/3 {
				s.FalseRejects = a.rejected / 3
			}
			snap.Strategies = append(snap.Strategies, s)
		}
		out = append(out, snap)
	}
	return out
}

var (
	naiveShape = strategyShape{name: "naive", overshoot: true, server: 3.1}
	luaShape   = strategyShape{name: "lua", server: 6.4}
)

// asciiOptions are the options of the fixture run, drawn without colour.
func asciiOptions() Options {
	return Options{
		Target:     bench.Target{Kind: "redis-server", Addr: "127.0.0.1:41234"},
		Limiter:    "concurrency",
		CountLabel: "in-flight",
		Limit:      fixtureLimit,
		Workers:    64,
		Total:      fixtureTotal,
		Profile:    colorprofile.ASCII,
		Verdict:    verdict.InSnapshot,
	}
}

// feed runs snapshots through the model as the program would.
func feed(m Model, snaps ...bench.Snapshot) Model {
	for _, s := range snaps {
		next, _ := m.Update(SnapshotMsg{s})
		m = next.(Model)
	}
	return m
}

func resize(m Model, w, h int) Model {
	next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return next.(Model)
}

// fakeControls records what the dashboard asked of the engine.
type fakeControls struct{ calls []bool }

func (f *fakeControls) SetPaused(p bool) { f.calls = append(f.calls, p) }

// fixtureRace is the article's race as a trace publishes it: r4117 and r4120 both count 19,
// then both add; 21 held, limit 20.
func fixtureRace() *trace.Overshoot {
	held := int64(21)
	step := func(op, phase, reply string, sent, replied int64) trace.StepOut {
		return trace.StepOut{Op: op, Phase: phase, Reply: json.RawMessage(reply), SentUs: sent, RepliedUs: replied}
	}
	naive := func(id string, raced bool, at int64) trace.Request {
		return trace.Request{ID: id, Raced: raced, Steps: []trace.StepOut{
			step("ZREMRANGEBYSCORE", "prune", "0", at, at+60), step("ZCARD", "check", "19", at+62, at+120),
			step("ZADD", "write", "1", at+310, at+390), step("PEXPIRE", "expire", "1", at+392, at+450),
		}}
	}
	return &trace.Overshoot{AtMs: 1200.45, Held: &held, Limit: fixtureLimit, Omitted: 19,
		Requests: []trace.Request{naive("r4117", true, 1_200_000), naive("r4120", true, 1_200_020)}}
}
