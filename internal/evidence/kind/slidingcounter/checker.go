package slidingcounter

import (
	"sync"
	"time"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
)

// checker is one key's overshoot evidence: its admits, judged together (check) as they come. A
// judging reads every admit so far, so between two the admits only gather: the verdict so far is
// judged again at most every judgeEvery (a live view shows a proven overshoot within about that
// long of its evidence), and whole once the run ends. The workers' admits only append, so a
// judging reads the admits up to its count without holding them up.
type checker struct {
	overshoot.Plain
	spec Spec

	mu     sync.Mutex // the admits, and onOver
	admits []decision
	onOver func(overshoot.Moment)

	judging  sync.Mutex // what the judgings found
	judged   int        // how many admits the last judging read
	judgedAt time.Time  // when
	last     Result
	power    map[int64]powerAt // CaughtFrom by maxK, and how many admits it read
}

// powerAt is a power measured over the first n admits.
type powerAt struct {
	n  int
	k  int64
	ok bool
}

// judgeEvery is how often the live verdict is judged again while admits come.
const judgeEvery = time.Second

func newChecker(s Spec) *checker { return &checker{spec: s, power: map[int64]powerAt{}} }

// Admit implements overshoot.Checker.
func (c *checker) Admit(d evidence.Decision, kept func()) overshoot.Outcome {
	kept()
	d.Outcome = evidence.Admitted // what it is told of is an admit
	c.mu.Lock()
	c.admits = append(c.admits, decisionOf(c.spec, d))
	c.mu.Unlock()
	return overshoot.Judged
}

// OnFirstOver implements overshoot.Checker.
func (c *checker) OnFirstOver(report func(overshoot.Moment)) {
	c.mu.Lock()
	c.onOver = report
	c.mu.Unlock()
}

// soFar is every admit so far, which no later admit changes.
func (c *checker) soFar() []decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.admits[:len(c.admits):len(c.admits)]
}

// Result implements overshoot.Checker: the last judging, or a new one when admits came since and
// the last is older than judgeEvery.
func (c *checker) Result() overshoot.CheckResult {
	c.judging.Lock()
	defer c.judging.Unlock()
	admits := c.soFar()
	if c.judged < len(admits) && time.Since(c.judgedAt) >= judgeEvery {
		c.judge(admits)
	}
	return c.result(admits)
}

// Finish implements overshoot.Checker: every admit judged.
func (c *checker) Finish() overshoot.CheckResult {
	c.judging.Lock()
	defer c.judging.Unlock()
	admits := c.soFar()
	if c.judged < len(admits) || c.judgedAt.IsZero() {
		c.judge(admits)
	}
	return c.result(admits)
}

// judge judges admits, and tells the first overshoot once. Called under judging.
func (c *checker) judge(admits []decision) {
	c.last = check(c.spec, admits)
	c.judged, c.judgedAt = len(admits), time.Now()
	if f := c.last.First; f != nil {
		c.mu.Lock()
		report := c.onOver
		c.onOver = nil
		c.mu.Unlock()
		if report != nil {
			report(c.moment(*f))
		}
	}
}

// moment is the first overshoot as the admits behind it: Admitted in the window and Previous in the
// one before, of which at most the limit less the floored weighted share of Previous, and Previous
// itself, fit in a correct member's two windows.
func (c *checker) moment(f First) overshoot.Moment {
	m := overshoot.Moment{Count: f.Admitted + f.Previous, Allowed: f.Limit - f.Floored() + f.Previous}
	from, to := f.WindowStartUs-f.WindowUs, f.WindowStartUs+f.WindowUs
	if c.spec.Timing == Intervals {
		m.Interval, m.FromUs, m.ToUs = true, from, to
	} else {
		m.FromMs, m.ToMs = floorDiv(from, 1000), ceilDiv(to, 1000)
	}
	return m
}

// result is the last judging as the engine's, and the admits of the newest window by their
// clocks. Called under judging.
func (c *checker) result(admits []decision) overshoot.CheckResult {
	r := overshoot.CheckResult{Peak: c.last.Peak, Overshoot: c.last.Overshoot, OvershootEvent: c.last.Events, Unjudged: c.last.Unjudged}
	if n := len(admits); n > 0 {
		newest := admits[n-1].ClockHiUs
		for i := n - 1; i >= 0 && admits[i].ClockHiUs > newest-c.spec.windowUs(); i-- {
			r.Current++
		}
	}
	return r
}

// CaughtFrom implements overshoot.Checker (power.go), measured again only when admits came since.
func (c *checker) CaughtFrom(maxK int64) (int64, bool) {
	c.judging.Lock()
	defer c.judging.Unlock()
	admits := c.soFar()
	if p, ok := c.power[maxK]; ok && p.n == len(admits) {
		return p.k, p.ok
	}
	k, ok := caughtFrom(c.spec, admits, maxK)
	c.power[maxK] = powerAt{len(admits), k, ok}
	return k, ok
}
