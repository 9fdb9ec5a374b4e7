package refusal_test

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// The false-reject rules are proved in comments; these tests hold them to simulated limiters of
// every kind the rules claim to cover, each written the way a real library writes it, fed what
// the hammer's load does to them: racing workers whose calls run anywhere between their sending
// and their reply, clocks skewed apart so stamps reach the limiter out of order, slow calls,
// calls that fail (some run anyway, some late, after their error), releases that fail, holds
// longer than stale-after. A correct limiter must never be blamed, in any of many random runs;
// a too-strict one must be caught, so the rules are not merely silent.

// simCall is one call of a simulated run, in µs of the run's monotonic clock.
type simCall struct {
	worker             int
	sent, ran, replied int64
	stamp              int64 // the client's time passed to the limiter
	read               int64 // monotone virtual clock: the TIME it read, max(stamp, the mark)
	stampHi            int64 // monotone virtual clock: the highest stamp sent by its reply
	failed, runs       bool  // failed: the caller saw an error; runs: the limiter still ran it
	admitted           bool
	holdUntil          int64 // concurrency: when the release is sent
	relRan, relReplied int64
	relFailed, relRuns bool
	abandoned          bool // concurrency: admitted and never released, as by a crashed client
	member             int
}

// simLimiter decides a call when it runs: at monotonic time ran (for a limiter on the server's
// clock) with the call's stamp (for one on the client's).
type simLimiter interface {
	acquire(c *simCall) bool
	release(c *simCall) // concurrency only
}

type simShape struct {
	kind          testKind
	workers       int
	limit         int64
	window        time.Duration // windows; bucket: the limit refills per window
	staleAfter    time.Duration
	skew          time.Duration
	duration      time.Duration
	failRate      float64 // calls that fail; half of them run anyway, some after their error
	relFailRate   float64
	longHoldRate  float64 // concurrency: holds past stale-after
	abandonRate   float64 // concurrency: admits never released (Config.Abandon)
	server        bool    // the limiter reads the server's clock: judged by [sent, replied]
	bursty        bool    // load for two windows, idle for one and a half, as the hammer's default
	aligned       bool
	rules         refusal.Rules
	serverDriftPm float64 // server clock rate offset, per mille
	// monotone: the hammer's virtual clock with its mark (limiter/virtual_clock.go): a call's
	// TIME is the highest of its stamp and every TIME read before it on the key
	monotone bool
}

// clock is the time the limiter reads for c on the client's clock: its stamp, or on the
// monotone virtual clock what its TIME answered.
func (c *simCall) clock() int64 {
	if c.read != 0 {
		return c.read
	}
	return c.stamp
}

// event is one step of the simulation, run in time order.
type event struct {
	at  int64
	seq int
	run func()
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if e[i].at != e[j].at {
		return e[i].at < e[j].at
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// simulateRefusals runs lim under shape and judges its refusals the way the engine does: in batches,
// each up to the workers' low-water mark. It returns the false rejects and the refusals.
func simulateRefusals(t *testing.T, seed uint64, shape simShape, lim simLimiter) (falseRejects, refused int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed*7+1))
	base := int64(1_700_000_000_000_000) + rng.Int64N(1_000_000)
	spec := refusal.Spec{
		Kind: string(shape.kind), Model: shape.kind.model(), Limit: shape.limit, Aligned: shape.aligned, Base: base, Window: shape.window.Microseconds(),
		RatePerSec: float64(shape.limit) / shape.window.Seconds(), StaleAfter: shape.staleAfter.Microseconds(),
		Server: shape.server, Skew: shape.skew.Microseconds(), Horizon: 50_000, Rules: shape.rules,
		Monotone: shape.monotone,
	}
	var mark, sentHigh int64 // monotone: the key's mark, and the highest stamp sent
	judge := refusal.New(spec)
	var q events
	seq := 0
	push := func(at int64, run func()) { seq++; heap.Push(&q, event{at, seq, run}) }
	busy := make([]int64, shape.workers) // sent of the worker's call in flight, or forever
	skews := make([]int64, shape.workers)
	for w := range skews {
		if shape.skew > 0 {
			skews[w] = rng.Int64N(2*shape.skew.Microseconds()+1) - shape.skew.Microseconds()
		}
		busy[w] = refusal.Forever
	}
	latency := func() int64 {
		l := 40 + rng.Int64N(400)
		switch r := rng.Float64(); {
		case r < 0.02:
			l += rng.Int64N(8000) // a slow call
		case r < 0.2:
			l += rng.Int64N(1500)
		}
		return l
	}
	end := shape.duration.Microseconds()
	nextMember := 0
	record := func(c *simCall) {
		d := evidence.Decision{SentUs: c.sent, RepliedUs: c.replied, ClockLoUs: c.stamp, ClockHiUs: max(c.stamp, c.stampHi)}
		if shape.server {
			d.ClockLoUs, d.ClockHiUs = c.sent, c.replied
		}
		switch {
		case c.failed:
			d.Outcome = evidence.Unknown
		case c.admitted:
			d.Outcome = evidence.Admitted
		default:
			d.Outcome = evidence.Refused
			refused++
		}
		if shape.kind == concurrencyKind && c.admitted && !c.failed && !c.abandoned {
			d.ReleasedUs, d.ReleaseOK = c.relReplied, !c.relFailed
		}
		d.Abandoned = c.abandoned
		judge.Record(d)
		busy[c.worker] = refusal.Forever
	}
	var start func(w int, at int64)
	start = func(w int, at int64) {
		if shape.bursty {
			burst, cycle := 2*spec.Window, 7*spec.Window/2
			if at%cycle >= burst {
				at += cycle - at%cycle + rng.Int64N(200)
			}
		}
		if at >= end {
			return
		}
		nextMember++
		c := &simCall{worker: w, sent: at, member: nextMember}
		busy[w] = at
		// The stamp is read just before sending, on the worker's skewed clock.
		c.stamp = base + at - rng.Int64N(30) + skews[w]
		sentHigh = max(sentHigh, c.stamp)
		lat := latency()
		c.replied = at + lat
		c.ran = at + rng.Int64N(lat+1)
		c.failed = rng.Float64() < shape.failRate
		c.runs = !c.failed || rng.IntN(2) == 0
		if c.failed && c.runs && rng.IntN(3) == 0 {
			c.ran = c.replied + rng.Int64N(20_000) // still queued when the caller gave up
		}
		if c.runs {
			push(c.ran, func() {
				if shape.monotone {
					c.read = max(c.stamp, mark)
					mark = c.read
				}
				c.admitted = lim.acquire(c)
			})
		}
		push(c.replied, func() {
			if shape.monotone {
				c.stampHi = sentHigh // read after the reply, as the engine reads it
			}
			if shape.kind == concurrencyKind && c.admitted && !c.failed && rng.Float64() < shape.abandonRate {
				c.abandoned = true // recorded now, never released; the worker goes on
				record(c)
				start(w, c.replied+rng.Int64N(50))
				return
			}
			if shape.kind == concurrencyKind && c.admitted && !c.failed {
				hold := 200 + rng.Int64N(3000)
				if rng.Float64() < shape.longHoldRate {
					hold += shape.staleAfter.Microseconds() + rng.Int64N(20_000)
				}
				relSent := c.replied + hold
				rl := latency()
				c.relReplied = relSent + rl
				c.relRan = relSent + rng.Int64N(rl+1)
				c.relFailed = rng.Float64() < shape.relFailRate
				c.relRuns = !c.relFailed || rng.IntN(2) == 0
				if c.relRuns {
					push(c.relRan, func() { lim.release(c) })
				}
				push(c.relReplied, func() { record(c); start(w, c.relReplied+rng.Int64N(50)) })
				return
			}
			record(c)
			think := rng.Int64N(100)
			if c.failed {
				think += 2000
			}
			start(w, c.replied+think)
		})
	}
	for w := 0; w < shape.workers; w++ {
		start(w, rng.Int64N(200))
	}
	nextJudge := int64(0)
	for q.Len() > 0 {
		ev := heap.Pop(&q).(event)
		for ev.at >= nextJudge {
			mark := nextJudge
			for _, b := range busy {
				mark = min(mark, b)
			}
			judge.JudgeBefore(mark)
			nextJudge += 20_000 + rng.Int64N(80_000)
		}
		ev.run()
	}
	judge.JudgeBefore(refusal.Forever)
	return judge.Count, refused
}

// serverMs is the limiter's TIME for a call run at mono µs, in ms as scripts use it.
func serverMs(shape simShape, mono int64) float64 {
	return math.Floor(float64(mono)*(1+shape.serverDriftPm/1000)/1000) + 1_700_000_000_000
}

// nowMs is the time a limiter decides c by, in whole ms: its stamp, or its own clock.
func nowMs(shape simShape, c *simCall) float64 {
	if shape.server {
		return serverMs(shape, c.ran)
	}
	return float64(c.clock() / 1000)
}

// concurrencySim reclaims by the stamps it is given (the shipped script), by its own clock
// (a slot SET with PX stale-after), by deadlines (a member scored its stamp plus stale-after,
// dropped once below now: sidekiq-throttled), or, too strict, never releases (leaks) or never
// reclaims (noReclaim: a crashed client's slot is held for ever).
type concurrencySim struct {
	shape     simShape
	byTTL     bool
	deadline  bool
	leaks     bool
	noReclaim bool
	members   map[int]float64 // member -> its score (stamp ms), deadline (stamp ms) or expiry (server ms)
}

func (l *concurrencySim) acquire(c *simCall) bool {
	stale := float64(l.shape.staleAfter.Milliseconds())
	now := nowMs(l.shape, c)
	if l.byTTL {
		now = serverMs(l.shape, c.ran)
	}
	for m, v := range l.members {
		switch {
		case l.noReclaim:
		case l.byTTL || l.deadline:
			if v <= now {
				delete(l.members, m)
			}
		case v <= now-stale:
			delete(l.members, m)
		}
	}
	if int64(len(l.members)) >= l.shape.limit {
		return false
	}
	if l.byTTL || l.deadline {
		l.members[c.member] = now + stale
	} else {
		l.members[c.member] = now
	}
	return true
}

func (l *concurrencySim) release(c *simCall) {
	if !l.leaks {
		delete(l.members, c.member)
	}
}

// windowSim is a window limiter: a log counted by stamp (the shipped script), a list of the
// newest admits counted by order (alisaifee/limits), an epoch-aligned counter per window, a
// counter opened by a first hit and ended by its TTL (rate-limiter-flexible), a window anchored
// at a stamp in the state; or one of the too-strict ones.
type windowSim struct {
	shape simShape
	style string
	log   []float64 // stamps (ms) of admits, in the order they ran
	count map[int64]int64
	// first hit / anchored
	expires, anchor float64
	n               int64
	open            bool
}

func (l *windowSim) acquire(c *simCall) bool {
	w := float64(l.shape.window.Milliseconds())
	now := nowMs(l.shape, c)
	limit := l.shape.limit
	switch l.style {
	case "log", "log-two-windows", "log-counts-refused":
		reach := w
		if l.style == "log-two-windows" {
			reach = 2 * w
		}
		var n int64
		for _, s := range l.log {
			if s > now-reach {
				n++
			}
		}
		ok := n < limit
		if ok || l.style == "log-counts-refused" {
			l.log = append(l.log, now)
		}
		if len(l.log) > 64*int(limit) { // long behind every window: forget, as the script prunes
			kept := l.log[:0]
			for _, s := range l.log {
				if s > now-reach-float64(4*l.shape.skew.Milliseconds()+20) {
					kept = append(kept, s)
				}
			}
			l.log = kept
		}
		return ok
	case "list":
		if int64(len(l.log)) >= limit && l.log[len(l.log)-int(limit)] > now-w {
			return false
		}
		l.log = append(l.log, now)
		if len(l.log) > 2*int(limit) { // LTRIM to the limit
			l.log = append(l.log[:0], l.log[len(l.log)-int(limit):]...)
		}
		return true
	case "aligned", "aligned-limit-minus-one":
		idx := int64(math.Floor(now / w))
		if l.style == "aligned-limit-minus-one" {
			limit--
		}
		if l.count[idx] >= limit {
			return false
		}
		l.count[idx]++
		return true
	case "first-hit", "ttl-renewed":
		t := serverMs(l.shape, c.ran)
		if !l.open || t >= l.expires {
			l.open, l.n, l.expires = true, 0, t+w
		}
		l.n++ // rate-limiter-flexible counts every call; the caller decides
		if l.style == "ttl-renewed" {
			l.expires = t + w
		}
		return l.n <= limit
	case "anchored":
		if !l.open || now >= l.anchor+w {
			l.open, l.anchor, l.n = true, now, 0
		}
		if l.n >= limit {
			return false
		}
		l.n++
		return true
	}
	panic("unknown style " + l.style)
}

func (l *windowSim) release(*simCall) {}

// bucketSim is a token bucket: GCRA (the shipped script; with the TAT rounded up to a
// microsecond, as a %.6f string; reading the server's clock), tokens and a last time that only
// moves forward (textbook; Spring's two keys, which charge a late call nothing for the gap),
// a refill in steps of a window (upstash); or one of the too-strict ones.
type bucketSim struct {
	shape        simShape
	style        string
	tat          float64
	tokens, last float64
	started      bool
	stepMs       float64
}

func (l *bucketSim) acquire(c *simCall) bool {
	b := float64(l.shape.limit)
	rate := b / float64(l.shape.window.Milliseconds()) // tokens per ms
	now := float64(c.clock()) / 1000
	if l.shape.server {
		now = serverMs(l.shape, c.ran)
	}
	interval := 1 / rate
	switch l.style {
	case "gcra", "gcra-rounded", "gcra-one-short":
		burst := b
		if l.style == "gcra-one-short" {
			burst--
		}
		tat := math.Max(l.tat, now)
		next := tat + interval
		if l.style == "gcra-rounded" {
			next = math.Ceil(next*1000) / 1000 // µs, rounded up
		}
		if now < next-burst*interval {
			return false
		}
		l.tat = next
		return true
	case "tokens", "spring", "slow", "counts-refused":
		if !l.started {
			l.started, l.tokens, l.last = true, b, now
			if l.style == "counts-refused" {
				l.tokens = 0 // a meter: the level drawn
			}
		}
		r := rate
		if l.style == "slow" {
			r /= 60
		}
		switch l.style {
		case "tokens", "slow":
			if now > l.last {
				l.tokens = math.Min(b, l.tokens+(now-l.last)*r)
				l.last = now
			}
			if l.tokens-(l.last-now)*r >= 1 {
				l.tokens--
				return true
			}
			return false
		case "spring":
			avail := math.Min(b, l.tokens+math.Max(0, now-l.last)*r)
			ok := avail >= 1
			if ok {
				avail--
			}
			l.tokens, l.last = avail, math.Max(now, l.last)
			return ok
		default: // counts-refused: charged for every attempt, drained at the rate
			if now > l.last {
				l.tokens = math.Max(0, l.tokens-(now-l.last)*r)
				l.last = now
			}
			l.tokens++
			return l.tokens <= b
		}
	case "stepped":
		if !l.started {
			l.started, l.tokens, l.last = true, b, now
		}
		if now > l.last {
			steps := math.Floor((now - l.last) / l.stepMs)
			l.tokens = math.Min(b, l.tokens+steps*l.stepMs*rate)
			l.last += steps * l.stepMs
		}
		if l.tokens >= 1 {
			l.tokens--
			return true
		}
		return false
	}
	panic("unknown style " + l.style)
}

func (l *bucketSim) release(*simCall) {}

// simRuns is how many seeds each case runs.
func simRuns(t *testing.T) int {
	switch {
	case testing.Short():
		return 3
	case raceDetector:
		return 2
	}
	return 12
}

// A correct limiter of every kind, under every kind of disorder the load makes, is never
// blamed; and every run is contended, so the zero means something.
func TestCorrectLimitersAreNeverBlamedUnderReordering(t *testing.T) {
	conc := simShape{kind: concurrencyKind, workers: 24, limit: 5, window: 20 * time.Millisecond, staleAfter: 30 * time.Millisecond, duration: 800 * time.Millisecond}
	win := simShape{kind: slidingKind, workers: 24, limit: 6, window: 20 * time.Millisecond, skew: 3 * time.Millisecond, duration: 800 * time.Millisecond}
	fixed := win
	fixed.kind = fixedKind
	bucket := simShape{kind: bucketKind, workers: 24, limit: 6, window: 20 * time.Millisecond, duration: 800 * time.Millisecond}
	cases := []struct {
		name  string
		shape simShape
		lim   func(simShape) simLimiter
	}{
		{"concurrency reclaimed by stamp", conc, func(s simShape) simLimiter { return &concurrencySim{shape: s, members: map[int]float64{}} }},
		{"concurrency reclaimed by stamp, skewed, long holds, failures", with(conc, func(s *simShape) {
			s.skew, s.failRate, s.relFailRate, s.longHoldRate = 3*time.Millisecond, 0.01, 0.05, 0.05
		}), func(s simShape) simLimiter { return &concurrencySim{shape: s, members: map[int]float64{}} }},
		{"concurrency reclaimed by server TTL, skewed, failures", with(conc, func(s *simShape) {
			s.skew, s.failRate, s.relFailRate, s.longHoldRate, s.serverDriftPm = 3*time.Millisecond, 0.01, 0.05, 0.05, 0.9
		}), func(s simShape) simLimiter {
			return &concurrencySim{shape: s, byTTL: true, members: map[int]float64{}}
		}},
		{"concurrency on the server's clock", with(conc, func(s *simShape) {
			s.server, s.relFailRate, s.longHoldRate, s.serverDriftPm = true, 0.05, 0.05, -0.9
		}), func(s simShape) simLimiter {
			return &concurrencySim{shape: s, byTTL: true, members: map[int]float64{}}
		}},
		// Abandoned requests, reclaimed by each of the clocks a limiter may reclaim by.
		{"concurrency abandoned, reclaimed by stamp, skewed, failures", with(conc, func(s *simShape) {
			s.skew, s.failRate, s.relFailRate, s.abandonRate = 3*time.Millisecond, 0.01, 0.02, 0.05
		}), func(s simShape) simLimiter { return &concurrencySim{shape: s, members: map[int]float64{}} }},
		{"concurrency abandoned, deadlines, skewed", with(conc, func(s *simShape) {
			s.skew, s.abandonRate = 3*time.Millisecond, 0.05
		}), func(s simShape) simLimiter {
			return &concurrencySim{shape: s, deadline: true, members: map[int]float64{}}
		}},
		{"concurrency abandoned, reclaimed by server TTL, skewed", with(conc, func(s *simShape) {
			s.skew, s.abandonRate, s.serverDriftPm = 3*time.Millisecond, 0.05, 0.9
		}), func(s simShape) simLimiter { return &concurrencySim{shape: s, byTTL: true, members: map[int]float64{}} }},
		{"concurrency abandoned, on the server's clock", with(conc, func(s *simShape) {
			s.server, s.abandonRate, s.serverDriftPm = true, 0.05, -0.9
		}), func(s simShape) simLimiter { return &concurrencySim{shape: s, byTTL: true, members: map[int]float64{}} }},
		{"concurrency abandoned, never reclaimed, told no stale time", with(conc, func(s *simShape) {
			s.skew, s.abandonRate, s.rules.NoStaleAfter = 3*time.Millisecond, 0.05, true
		}), func(s simShape) simLimiter {
			return &concurrencySim{shape: s, noReclaim: true, members: map[int]float64{}}
		}},
		{"sliding log by stamp", win, func(s simShape) simLimiter { return &windowSim{shape: s, style: "log"} }},
		{"sliding log by stamp, failures", with(win, func(s *simShape) { s.failRate = 0.01 }),
			func(s simShape) simLimiter { return &windowSim{shape: s, style: "log"} }},
		{"sliding list by order", win, func(s simShape) simLimiter { return &windowSim{shape: s, style: "list"} }},
		{"sliding list on the server's clock", with(win, func(s *simShape) { s.server, s.skew = true, 0 }),
			func(s simShape) simLimiter { return &windowSim{shape: s, style: "list"} }},
		{"fixed, epoch-aligned", with(fixed, func(s *simShape) { s.aligned = true }),
			func(s simShape) simLimiter { return &windowSim{shape: s, style: "aligned", count: map[int64]int64{}} }},
		{"fixed, epoch-aligned judged as unknown alignment", fixed,
			func(s simShape) simLimiter { return &windowSim{shape: s, style: "aligned", count: map[int64]int64{}} }},
		{"fixed, first hit and TTL", with(fixed, func(s *simShape) { s.serverDriftPm = 0.9 }),
			func(s simShape) simLimiter { return &windowSim{shape: s, style: "first-hit"} }},
		{"fixed, first hit on the server's clock", with(fixed, func(s *simShape) { s.server, s.skew, s.serverDriftPm = true, 0, -0.9 }),
			func(s simShape) simLimiter { return &windowSim{shape: s, style: "first-hit"} }},
		{"fixed, anchored at a stamp", fixed, func(s simShape) simLimiter { return &windowSim{shape: s, style: "anchored"} }},
		{"GCRA", bucket, func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra"} }},
		{"GCRA, skewed, failures", with(bucket, func(s *simShape) { s.skew, s.failRate = 3*time.Millisecond, 0.01 }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra"} }},
		{"GCRA rounding its TAT up to a µs", with(bucket, func(s *simShape) { s.skew = time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-rounded"} }},
		{"GCRA on the server's clock", with(bucket, func(s *simShape) { s.server, s.serverDriftPm = true, 0.9 }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-rounded"} }},
		{"tokens, last only forward, skewed", with(bucket, func(s *simShape) { s.skew = 3 * time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "tokens"} }},
		{"tokens, last only forward, skewed by half a window", with(bucket, func(s *simShape) { s.skew = 10 * time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "tokens"} }},
		{"Spring's two keys, skewed", with(bucket, func(s *simShape) { s.skew = 3 * time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "spring"} }},
		{"refill in steps of a window, judged as given the window", with(bucket, func(s *simShape) {
			s.skew, s.rules.RefillStep = time.Millisecond, 20*time.Millisecond
		}), func(s simShape) simLimiter { return &bucketSim{shape: s, style: "stepped", stepMs: 20} }},
		{"refill in steps of a third of a window", with(bucket, func(s *simShape) { s.rules.RefillStep = 20 * time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "stepped", stepMs: 7} }},
		// The monotone virtual clock: a slow call may have read a TIME up to the highest stamp
		// sent by its reply; the bucket judge bounds each candidate by its own stamp (bucket.go).
		{"GCRA on the monotone virtual clock, skewed, failures", with(bucket, func(s *simShape) {
			s.monotone, s.skew, s.failRate = true, 3*time.Millisecond, 0.01
		}), func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-rounded"} }},
		{"tokens on the monotone virtual clock, skewed", with(bucket, func(s *simShape) { s.monotone, s.skew = true, 3*time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "tokens"} }},
		{"Spring's two keys on the monotone virtual clock, skewed by half a window", with(bucket, func(s *simShape) {
			s.monotone, s.skew = true, 10*time.Millisecond
		}), func(s simShape) simLimiter { return &bucketSim{shape: s, style: "spring"} }},
		{"GCRA on the monotone virtual clock, judged as given the window", with(bucket, func(s *simShape) {
			s.monotone, s.skew, s.rules.RefillStep = true, time.Millisecond, 20*time.Millisecond
		}), func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-rounded"} }},
		// Given the window, a GCRA is judged as a stepped bucket too: its rounding must still be
		// forgiven (the stepped bound counts whole draws, the continuous one the rounding).
		{"GCRA rounding its TAT, judged as given the window", with(bucket, func(s *simShape) {
			s.skew, s.rules.RefillStep = time.Millisecond, 20*time.Millisecond
		}), func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-rounded"} }},
	}
	// Each again with idle spells between bursts (refill and expiry), and again with barely more
	// workers than the limit, where a limiter is often exactly at it and one slot, window admit
	// or token counted too few would blame it.
	for _, c := range cases[:len(cases):len(cases)] {
		bursty, few := c, c
		bursty.name, bursty.shape.bursty = c.name+", bursty", true
		few.name, few.shape.workers = c.name+", few workers", int(c.shape.limit)+2
		if c.shape.kind == concurrencyKind {
			few.shape.failRate = max(few.shape.failRate, 0.05)
		}
		cases = append(cases, bursty, few)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < simRuns(t); i++ {
				seed := uint64(i*7919 + len(c.name))
				blamed, refused := simulateRefusals(t, seed, c.shape, c.lim(c.shape))
				if refused == 0 {
					t.Fatalf("seed %d: never refused: the run proves nothing", seed)
				}
				if blamed != 0 {
					t.Fatalf("seed %d: a correct limiter blamed for %d of %d refusals", seed, blamed, refused)
				}
			}
		})
	}
}

// Each too-strict limiter is caught in every run, under the same disorder.
func TestTooStrictLimitersAreCaughtUnderReordering(t *testing.T) {
	conc := simShape{kind: concurrencyKind, workers: 24, limit: 5, staleAfter: 300 * time.Millisecond, skew: time.Millisecond, duration: 500 * time.Millisecond}
	win := simShape{kind: slidingKind, workers: 24, limit: 6, window: 20 * time.Millisecond, skew: 3 * time.Millisecond, duration: 500 * time.Millisecond}
	fixed := win
	fixed.kind = fixedKind
	// A token interval well above the grouping of refusals (a millisecond), as at the defaults.
	bucket := simShape{kind: bucketKind, workers: 24, limit: 6, window: 200 * time.Millisecond, duration: 500 * time.Millisecond}
	cases := []struct {
		name  string
		shape simShape
		lim   func(simShape) simLimiter
	}{
		{"concurrency leaking every slot", conc, func(s simShape) simLimiter {
			return &concurrencySim{shape: s, leaks: true, members: map[int]float64{}}
		}},
		{"concurrency never reclaiming abandoned slots", with(conc, func(s *simShape) { s.staleAfter, s.abandonRate = 30*time.Millisecond, 0.05 }),
			func(s simShape) simLimiter {
				return &concurrencySim{shape: s, noReclaim: true, members: map[int]float64{}}
			}},
		{"concurrency never dropping abandoned deadlines, on the server's clock", with(conc, func(s *simShape) {
			s.staleAfter, s.abandonRate, s.server, s.skew = 30*time.Millisecond, 0.05, true, 0
		}), func(s simShape) simLimiter {
			return &concurrencySim{shape: s, noReclaim: true, members: map[int]float64{}}
		}},
		{"sliding log two windows back", win, func(s simShape) simLimiter { return &windowSim{shape: s, style: "log-two-windows"} }},
		{"sliding log counting refused attempts", win, func(s simShape) simLimiter { return &windowSim{shape: s, style: "log-counts-refused"} }},
		{"fixed window admitting limit-1", with(fixed, func(s *simShape) { s.aligned = true }),
			func(s simShape) simLimiter {
				return &windowSim{shape: s, style: "aligned-limit-minus-one", count: map[int64]int64{}}
			}},
		{"fixed window whose TTL every attempt renews", fixed, func(s simShape) simLimiter { return &windowSim{shape: s, style: "ttl-renewed"} }},
		{"GCRA one token short", bucket, func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-one-short"} }},
		{"GCRA one token short, judged as given the window", with(bucket, func(s *simShape) { s.rules.RefillStep = s.window }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-one-short"} }},
		{"GCRA one token short on the monotone virtual clock, skewed", with(bucket, func(s *simShape) { s.monotone, s.skew = true, time.Millisecond }),
			func(s simShape) simLimiter { return &bucketSim{shape: s, style: "gcra-one-short"} }},
		{"bucket refilling 60 times too slowly", bucket, func(s simShape) simLimiter { return &bucketSim{shape: s, style: "slow"} }},
		{"meter charging refused attempts", bucket, func(s simShape) simLimiter { return &bucketSim{shape: s, style: "counts-refused"} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < simRuns(t); i++ {
				seed := uint64(i*104729 + len(c.name))
				blamed, refused := simulateRefusals(t, seed, c.shape, c.lim(c.shape))
				if blamed == 0 {
					t.Fatalf("seed %d: a too-strict limiter not caught in %d refusals", seed, refused)
				}
			}
		})
	}
}

func with(s simShape, change func(*simShape)) simShape {
	change(&s)
	return s
}
