package slidingcounter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/limitctl/limitctl/internal/evidence"
)

// The members of the family, simulated: a two-counter limiter as a library writes it, decided
// request by request in the order its server ran them, on the clock its contract gives it, its
// counters expiring on the server's clock. Every correct one must be held (never blamed); each
// buggy one is a class the evidence must catch.

// rounding is how a member rounds the previous window's weighted share, in doubles as the
// libraries do.
type rounding uint8

const (
	floorShare rounding = iota // upstash: floor(p·(1-f)) + c >= L refuses
	roundShare                 // go-chi/httprate: round(p·(1-f) + c) + 1 > L refuses
	exactShare                 // c + p·(1-f) < L admits
	ceilShare                  // ceil(p·(1-f)) + c >= L refuses
)

func (r rounding) String() string { return [...]string{"floor", "round", "exact", "ceil"}[r] }

// bug is how a member departs from the promise.
type bug uint8

const (
	noBug           bug = iota
	ignoresPrevious     // p is never read
	expiresEarly        // the counter lives one window (a TTL of the window, not two)
	admitsAtLimit       // c + floor(p·(1-f)) <= L admits: one too many
	elapsedWeight       // the previous window weighed by f, the elapsed share, not 1-f
	countsRefused       // every call is counted, refused ones too
	checkThenAct        // both counters read, the decision made, the INCR landing later (a race)
)

func (b bug) String() string {
	return [...]string{"correct", "ignores-previous", "expires-early", "admits-at-limit", "elapsed-weight", "counts-refused", "check-then-act"}[b]
}

// member is one limiter of the family.
type member struct {
	rounding rounding
	phaseUs  int64 // window k is [phase + k·W, phase + (k+1)·W) on its clock
	rephase  bool  // a new phase, at the deciding call's clock, once its state is gone: two windows with no write
	unitUs   int64 // the clock it reads is rounded down to this: 1000 (ms) or 1e6 (whole seconds)
	ttlUs    int64 // a counter lives this long after its first write, on the server's clock
	bug      bug
	raceUs   int64 // checkThenAct: how long after its read a decision's INCR lands
}

// run is a load on one key and how it was timed.
type run struct {
	windowUs, limit int64
	timing          Timing
	skewUs, rttUs   int64 // stamps: the callers' clocks within ±skew; a call's way each is under rtt
	errorRate       float64
	driftPPM        float64 // intervals: how much faster the server's clock runs (parts per million)
	sends           []int64 // real µs
	workers         []int64 // each send's caller's clock offset
}

// newRun is a contended load of about windows windows: bursts of one to four windows at a few
// times to twenty times the limit per window, each opened by a clump of up to twice the limit at
// once, apart by idle spells of a third of a window to two and a half, on the epoch's scale of µs.
func newRun(rng *rand.Rand, windowUs, limit int64, timing Timing, windows int64) run {
	r := run{windowUs: windowUs, limit: limit, timing: timing, errorRate: 0.01,
		skewUs: []int64{0, 5000, 20000}[rng.IntN(3)], rttUs: []int64{200, 2000, 10000}[rng.IntN(3)]}
	if timing == Intervals {
		r.driftPPM = float64(rng.IntN(1001) - 500) // within the 0.1% the evidence allows
	}
	offsets := make([]int64, 1+rng.IntN(16))
	for i := range offsets {
		if r.skewUs > 0 {
			offsets[i] = rng.Int64N(2*r.skewUs+1) - r.skewUs
		}
	}
	t := int64(1_700_000_000_000_000) + rng.Int64N(1_000_000_000)
	end := t + windows*windowUs
	for t < end {
		burst := t + windowUs + rng.Int64N(3*windowUs)
		perWindow := limit * []int64{3, 6, 20}[rng.IntN(3)]
		for range rng.Int64N(2 * limit) { // a clump of callers let go at once, as a burst starts
			r.sends = append(r.sends, t)
			r.workers = append(r.workers, offsets[rng.IntN(len(offsets))])
		}
		for t < burst && t < end {
			r.sends = append(r.sends, t)
			r.workers = append(r.workers, offsets[rng.IntN(len(offsets))])
			t += 1 + rng.Int64N(2*windowUs/perWindow)
		}
		t += windowUs/3 + rng.Int64N(2*windowUs+windowUs/6)
	}
	return r
}

// counter is one window's count on the server, and when its key expires (server µs).
type counter struct{ n, expires int64 }

// simulate runs m over r: the decisions as the evidence sees them.
func (m member) simulate(rng *rand.Rand, r run) []decision {
	type call struct {
		ran, clock      int64 // when the server ran it; the member's clock then
		stampUs         int64 // stamps: the now it was passed
		sent, replied   int64 // intervals
		outcome         evidence.Outcome
		lost            bool // its reply was lost: evidence.Unknown to the evidence
		index, landedAt int
	}
	calls := make([]call, len(r.sends))
	maxOffset := int64(0)
	for _, o := range r.workers {
		maxOffset = max(maxOffset, o)
	}
	base := r.sends[0]
	serverOffset := rng.Int64N(r.windowUs)
	for i, sent := range r.sends {
		c := call{index: i, lost: rng.Float64() < r.errorRate}
		way := func() int64 { return rng.Int64N(max(1, r.rttUs)) }
		switch r.timing {
		case Stamps:
			c.stampUs = floorDiv(sent+r.workers[i], 1000) * 1000 // the run passes now in ms
			c.ran = sent + way() + maxOffset                     // on the most advanced caller's clock
			c.clock = floorDiv(c.stampUs, m.unitUs) * m.unitUs
		case Intervals:
			c.sent = sent
			c.ran = sent + way()
			c.replied = c.ran + way()
			server := c.ran + serverOffset + int64(float64(c.ran-base)*r.driftPPM/1e6)
			c.clock = floorDiv(server, m.unitUs) * m.unitUs
		}
		calls[i] = c
	}
	order := make([]int, len(calls))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return calls[order[a]].ran < calls[order[b]].ran })

	w := r.windowUs
	counters := map[int64]*counter{}
	type landing struct{ window, at int64 }
	var pending []landing
	phase := m.phaseUs
	lastWrite := int64(math.MinInt64)
	incr := func(k, at int64) {
		c := counters[k]
		if c == nil || at >= c.expires {
			c = &counter{expires: at + m.ttlUs}
			counters[k] = c
		}
		c.n++
		lastWrite = at
	}
	read := func(k, at int64) int64 {
		if c := counters[k]; c != nil && at < c.expires {
			return c.n
		}
		return 0
	}
	for _, i := range order {
		c := &calls[i]
		for len(pending) > 0 && pending[0].at <= c.ran {
			incr(pending[0].window, pending[0].at)
			pending = pending[1:]
		}
		if m.rephase && lastWrite != math.MinInt64 && c.ran-lastWrite >= 2*w {
			phase, counters = c.clock, map[int64]*counter{}
		}
		k := floorDiv(c.clock-phase, w)
		f := float64(c.clock-phase-k*w) / float64(w)
		cur, prev := float64(read(k, c.ran)), float64(read(k-1, c.ran))
		weight := 1 - f
		switch m.bug {
		case ignoresPrevious:
			prev = 0
		case elapsedWeight:
			weight = f
		}
		x := prev * weight
		limit := float64(r.limit)
		var admit bool
		switch {
		case m.bug == admitsAtLimit:
			admit = cur+math.Floor(x) <= limit
		case m.rounding == floorShare:
			admit = cur+math.Floor(x) < limit
		case m.rounding == roundShare:
			admit = math.Round(cur+x)+1 <= limit
		case m.rounding == exactShare:
			admit = cur+x < limit
		default:
			admit = cur+math.Ceil(x) < limit
		}
		switch {
		case admit && m.bug == checkThenAct:
			pending = append(pending, landing{k, c.ran + m.raceUs})
		case admit || m.bug == countsRefused:
			incr(k, c.ran)
		}
		c.outcome = evidence.Refused
		if admit {
			c.outcome = evidence.Admitted
		}
	}
	late := 2*r.skewUs + r.rttUs + 1000 // the skew both ways, the way there, the stamp's ms
	out := make([]decision, len(calls))
	for i, c := range calls {
		o := c.outcome
		if c.lost {
			o = evidence.Unknown
		}
		if r.timing == Stamps {
			out[i] = stamped(c.stampUs, late, o)
		} else {
			out[i] = timed(c.sent, c.replied, o)
		}
	}
	return out
}

// spec is what the evidence is told of r and m: epoch-aligned only for stamps on the epoch's grid
// that never re-phases.
func (m member) spec(r run) Spec {
	s := Spec{Limit: r.limit, Window: durationUs(r.windowUs), Timing: r.timing, Grain: durationUs(m.unitUs)}
	if r.timing == Stamps && m.phaseUs == 0 && !m.rephase {
		s.Align = EpochAligned
	}
	return s
}

func (m member) String() string {
	return fmt.Sprintf("%s %s phase=%dus rephase=%v unit=%dus ttl=%dus", m.bug, m.rounding, m.phaseUs, m.rephase, m.unitUs, m.ttlUs)
}
