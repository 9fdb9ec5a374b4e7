package overshoot

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
)

// endpoint is a concurrency limiter behind HTTP, simulated on the true clock (µs): requests
// reach it netIn after they are sent, it decides at once, holds an admitted request's slot for
// hold(), answers gap() after releasing (a refusal at once), and the answer reaches the client
// netOut later.
type endpoint struct {
	limit     int   // slots a correct one keeps; the one under test may keep more
	raceUs    int64 // > 0: check-then-add, the slot written raceUs after the check (naive)
	hold, gap func(rng *rand.Rand) int64
	netIn     func(rng *rand.Rand) int64
	netOut    func(rng *rand.Rand) int64
}

// heldCall is one admitted call as the client saw it.
type heldCall struct{ sent, received int64 }

// run offers requests sent at random over dur (µs), at about perHold requests per hold, and
// returns the admits in the order their responses arrived, and the most slots truly held at
// once.
func (e endpoint) run(seed uint64, dur, holdUs int64, perHold int) (admits []heldCall, truePeak int) {
	rng := rand.New(rand.NewPCG(seed, 11))
	type req struct{ sent, arrive int64 }
	var reqs []req
	for t := int64(0); t < dur; t += rng.Int64N(2*holdUs/int64(perHold) + 1) {
		reqs = append(reqs, req{t, t + e.netIn(rng)})
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].arrive < reqs[j].arrive })
	var held, all []heldSpan // slots as [taken, released), true clock
	for _, q := range reqs {
		t := q.arrive
		live := held[:0]
		for _, h := range held {
			if h.end > t {
				live = append(live, h)
			}
		}
		held = live
		seen := 0 // what the check sees: slots taken by now and not yet released
		for _, h := range held {
			if h.start <= t {
				seen++
			}
		}
		if seen >= e.limit {
			continue // refused: answered at once, no span
		}
		taken := t + e.raceUs // naive: the slot is written a round trip after the check
		slot := heldSpan{start: taken, end: taken + e.hold(rng)}
		held, all = append(held, slot), append(all, slot)
		admits = append(admits, heldCall{sent: q.sent, received: slot.end + e.gap(rng) + e.netOut(rng)})
	}
	for _, a := range all { // the most slots held at one instant: at some slot's taking
		n := 0
		for _, b := range all {
			if b.start <= a.start && a.start < b.end {
				n++
			}
		}
		truePeak = max(truePeak, n)
	}
	sort.Slice(admits, func(i, j int) bool { return admits[i].received < admits[j].received })
	return admits, truePeak
}

func judgeHeld(c *HeldSpans, admits []heldCall) CheckResult {
	for _, a := range admits {
		c.AdmitInterval(time.Duration(a.sent)*time.Microsecond, time.Duration(a.received)*time.Microsecond)
	}
	return c.Finish()
}

const (
	heldLimit = 5
	heldHold  = 50 * time.Millisecond
)

func upTo(us int64) func(*rand.Rand) int64 {
	return func(r *rand.Rand) int64 { return r.Int64N(us + 1) }
}
func exactly(us int64) func(*rand.Rand) int64 { return func(*rand.Rand) int64 { return us } }

// correctFamilies are the endpoints HeldSpans must never blame: every one keeps heldLimit slots
// and the promise (holds at least D by its own clock, releases before answering).
func correctFamilies() map[string]endpoint {
	d := heldHold.Microseconds()
	fast := d * 1000 / 1001 // D by a clock 0.1% fast
	return map[string]endpoint{
		"holds exactly D, answers on release": {hold: exactly(d), gap: exactly(0)},
		"holds longer than D":                 {hold: func(r *rand.Rand) int64 { return d + r.Int64N(d) }, gap: exactly(0)},
		"answers a while after releasing":     {hold: exactly(d), gap: upTo(d / 2)},
		"a clock 0.1% fast":                   {hold: exactly(fast), gap: exactly(0)},
		"a timer 1ms early on a fast clock":   {hold: exactly(fast - 1000), gap: exactly(0)},
	}
}

// networks are the client's views of the endpoint: each side fast, slow or both.
var networks = map[string][2]func(*rand.Rand) int64{
	"loopback":           {upTo(100), upTo(100)},
	"slow requests":      {upTo(heldHold.Microseconds() / 2), upTo(100)},
	"slow responses":     {upTo(100), upTo(heldHold.Microseconds() / 2)},
	"slow on both sides": {upTo(heldHold.Microseconds() / 3), upTo(heldHold.Microseconds() / 3)},
}

func TestHeldSpansNeverBlameACorrectSemaphore(t *testing.T) {
	for fname, e := range correctFamilies() {
		for nname, net := range networks {
			e.limit, e.netIn, e.netOut = heldLimit, net[0], net[1]
			reachedLimit := 0
			for seed := uint64(1); seed <= 20; seed++ {
				admits, truePeak := e.run(seed, 3_000_000, heldHold.Microseconds(), 4*heldLimit)
				if truePeak > heldLimit {
					t.Fatalf("%s: the simulated semaphore held %d", fname, truePeak)
				}
				got := judgeHeld(NewHeldSpans(heldLimit, heldHold), admits)
				if got.Overshoot != 0 || got.OvershootEvent != 0 {
					t.Fatalf("%s, %s, seed %d: a correct semaphore blamed: %+v over %d admits", fname, nname, seed, got, len(admits))
				}
				if got.Peak == heldLimit {
					reachedLimit++
				}
			}
			if nname == "loopback" && reachedLimit == 0 {
				t.Errorf("%s on loopback: the evidence never saw the limit held (the test proves nothing)", fname)
			}
		}
	}
}

func TestHeldSpansCatchOneSlotTooManyWhenTheLoadHoldsThemAll(t *testing.T) {
	d := heldHold.Microseconds()
	for nname, net := range map[string][2]func(*rand.Rand) int64{"loopback": networks["loopback"], "2ms each way": {upTo(2000), upTo(2000)}} {
		e := endpoint{limit: heldLimit + 1, hold: exactly(d), gap: exactly(0), netIn: net[0], netOut: net[1]}
		judged := 0
		for seed := uint64(1); seed <= 20; seed++ {
			admits, truePeak := e.run(seed, 3_000_000, d, 4*heldLimit)
			if truePeak <= heldLimit {
				continue // the load never held limit+1: nothing to catch
			}
			judged++
			c := NewHeldSpans(heldLimit, heldHold)
			if got := judgeHeld(c, admits); got.Overshoot < 1 {
				t.Errorf("%s seed %d: limit+1 held at once (true peak %d) not proven: %+v", nname, seed, truePeak, got)
			}
			if k, ok := c.CaughtFrom(10); !ok || k != 1 {
				t.Errorf("%s seed %d: a run that proved overshoot is caught from 1, got %d %v", nname, seed, k, ok)
			}
		}
		if judged < 19 {
			t.Errorf("%s: the load held limit+1 in %d of 20 runs; the test needs more load", nname, judged)
		}
	}
}

func TestHeldSpansCatchTheNaiveCheckThenAdd(t *testing.T) {
	d := heldHold.Microseconds()
	// ZCARD, a round trip, then ZADD: requests checked within 300µs of each other all pass.
	e := endpoint{limit: heldLimit, raceUs: 300, hold: exactly(d), gap: exactly(0), netIn: upTo(100), netOut: upTo(100)}
	caught := 0
	for seed := uint64(1); seed <= 20; seed++ {
		admits, truePeak := e.run(seed, 3_000_000, d, 40*heldLimit)
		got := judgeHeld(NewHeldSpans(heldLimit, heldHold), admits)
		if got.Overshoot > 0 {
			caught++
		}
		if got.Peak > int64(truePeak) {
			t.Fatalf("seed %d: the evidence counted %d at once, more than the %d truly held", seed, got.Peak, truePeak)
		}
	}
	if caught < 19 {
		t.Errorf("the naive check-then-add caught in %d of 20 runs; want at least 19", caught)
	}
}

func TestHeldSpansProveMoreThanTheLimitHeldAtOnce(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	c := NewHeldSpans(2, 100*time.Millisecond)
	var moment *Moment
	c.OnFirstOver(func(m Moment) { moment = &m })
	for i := range 3 { // sent at 0, 1, 2 ms, answered at 101, 102, 103 ms: all held over [4, 98.9] ms
		c.AdmitInterval(ms(float64(i)), ms(101+float64(i)))
	}
	got := c.Finish()
	if got.Peak != 3 || got.Overshoot != 1 || got.OvershootEvent != 1 {
		t.Fatalf("three requests certainly held together against a limit of 2: %+v", got)
	}
	if moment == nil || moment.Count != 3 || !moment.Interval {
		t.Fatalf("first overshoot: %+v", moment)
	}
	// The moment names exactly the three: sent at or after FromUs, answered by ToUs.
	for i := range 3 {
		if s, r := int64(i)*1000, int64(101+i)*1000; s < moment.FromUs || r > moment.ToUs {
			t.Errorf("request %d [%d, %d] is not in the moment [%d, %d]", i, s, r, moment.FromUs, moment.ToUs)
		}
	}
}

func TestHeldSpansDoNotJoinRequestsThatFollowEachOther(t *testing.T) {
	c := NewHeldSpans(1, 100*time.Millisecond)
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	at := int64(0)
	for range 10 { // one worker: each request sent as the previous answer arrives
		c.AdmitInterval(ms(at), ms(at+101))
		at += 101
	}
	if got := c.Finish(); got.Overshoot != 0 || got.Peak != 1 {
		t.Fatalf("requests one after another held together: %+v", got)
	}
}

func TestHeldSpansLeaveEarlySlowAndLateAdmitsOut(t *testing.T) {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	c := NewHeldSpans(1, 100*time.Millisecond)
	if c.AdmitInterval(ms(0), ms(50)) { // answered sooner than the hold: the promise is broken
		t.Error("an early answer was judged")
	}
	if c.AdmitInterval(ms(0), ms(250)) { // 250 > 2D': no instant is certainly held
		t.Error("a call slower than twice the hold was judged")
	}
	c.AdmitInterval(ms(1000), ms(1101))
	c.AdmitInterval(ms(2000), ms(2101)) // settles the span that started near 1001 ms
	if c.AdmitInterval(ms(900), ms(1001)) {
		t.Error("a span recorded after a later one was settled was judged out of place")
	}
	got := c.Finish()
	if got.Unjudged != 3 || c.Early() != 1 {
		t.Errorf("unjudged %d early %d; want 3 and 1", got.Unjudged, c.Early())
	}
	c.Admit(evidence.Decision{SentUs: 5000, RepliedUs: 5000}, nothing) // no interval: no evidence
	if c.Early() != 2 {
		t.Errorf("Admit with one time is an early answer, no evidence: early %d", c.Early())
	}
}

func TestHeldSpansPowerIsHowFarThePeakStayedBelowTheLimit(t *testing.T) {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	c := NewHeldSpans(5, 100*time.Millisecond)
	c.AdmitInterval(ms(0), ms(101))
	c.AdmitInterval(ms(1), ms(102))
	c.Finish()
	if k, ok := c.CaughtFrom(10); !ok || k != 4 {
		t.Errorf("two held at once against a limit of 5: caught from %d %v; want 4", k, ok)
	}
	if _, ok := c.CaughtFrom(3); ok {
		t.Error("caught from 4 is not within 3")
	}
	if got := HoldAllowance(time.Millisecond); got != 0 {
		t.Errorf("a 1ms hold leaves %v to judge by; want 0", got)
	}
}
