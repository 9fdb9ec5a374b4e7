package bench

import (
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// BenchmarkEvidence is what each evidence feature costs per decision, recorded as the engine
// records it and read every 100ms of the stream as the engine's tick reads it: a call every 25µs
// (40,000 decisions a second), the limit 20. Side by side with the client's whole CPU per
// decision (BenchmarkHotPath's cpu-µs/decision, make bench-hammer's client µs/call) it is each
// feature's share; make bench-hammer prints them together.
func BenchmarkEvidence(b *testing.B) {
	const callEveryUs, tickUs = 25, 100_000
	// each runs one decision's recording at µs t (the i-th call) and a tick's read when due
	features := []struct {
		name   string
		record func(i int64, t int64)
		tick   func()
	}{}
	add := func(name string, record func(i, t int64), tick func()) {
		features = append(features, struct {
			name   string
			record func(i int64, t int64)
			tick   func()
		}{name, record, tick})
	}
	s := &strategyState{hist: hdrhistogram.New(histMin, histMax, histSigFigs)}
	add("latency-histogram", func(i, _ int64) { s.record(time.Duration(300+i%700) * time.Microsecond) }, func() {})
	w := overshoot.NewWitness(20, 10_000)
	add("witness", func(i, t int64) {
		// Every call admitted, held for 20 calls: the witness at the limit, never over it (over
		// it, each admit counts what is held by decision time, as it must to be fair).
		if i >= 20 {
			w.ReleaseHeld(uint64(i - 20))
		}
		w.AdmitHeld(uint64(i), t/1000, t/1000)
	}, func() { w.Result() })
	for _, c := range []struct {
		name string
		new  func() overshoot.Checker
	}{
		{"sliding-window", func() overshoot.Checker { return overshoot.NewSlidingChecker(20, 1000, 6000, false) }},
		{"fixed-window", func() overshoot.Checker { return overshoot.NewSlidingChecker(20, 1000, 6000, true) }},
		{"token-bucket", func() overshoot.Checker { return overshoot.NewBucketChecker(20, 20, 1, 6000) }},
	} {
		check := c.new()
		// Every call admitted (a limit the script does not keep): the checker's most work.
		add(c.name, func(_, t int64) { check.Admit(evidence.Decision{AtMs: t / 1000}, func() {}) }, func() { check.Result() })
	}
	for _, f := range features {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			next := int64(tickUs)
			for i := int64(0); i < int64(b.N); i++ {
				t := i * callEveryUs
				f.record(i, t)
				if t >= next {
					f.tick()
					next = t + tickUs
				}
			}
		})
	}
}
