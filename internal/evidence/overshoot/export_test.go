package overshoot

import "time"

// LiveEvery is how often the provisional judgment is made again, for the external tests.
const LiveEvery = liveEvery

// JudgedAndLive is what c has judged for good and its provisional judgment at now.
func (c *IntervalChecker) JudgedAndLive(now time.Time) (judged, live CheckResult) {
	judged = *c.pub.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	return judged, c.liveResult(now)
}

// PendingJudgments judges pending admits ({sent, replied} µs, sorted by sent) as the live view
// does (judgePending) and by counting each start's span directly, for the external tests.
func (c *IntervalChecker) PendingJudgments(pending [][2]int64) (fast, direct CheckResult) {
	c.pending = c.pending[:0]
	for _, p := range pending {
		c.pending = append(c.pending, span{sent: p[0], replied: p[1]})
	}
	fast = c.judgePending()
	n := len(c.pending)
	newest := c.pending[n-1].sent
	over := map[int64]bool{}
	for ci := range c.checks {
		ch := &c.checks[ci]
		for _, s := range c.pending {
			x := s.sent
			var count int64
			for _, a := range c.pending {
				if a.sent >= x && a.replied <= x+ch.Us {
					count++
				}
			}
			p := c.peakFor(ch, count)
			direct.Peak = max(direct.Peak, p)
			if p > c.limit {
				over[x] = true
			}
			if ci == 0 && x+c.windowUs > newest {
				direct.Current = max(direct.Current, count)
			}
		}
	}
	direct.OvershootEvent = int64(len(over))
	return fast, direct
}

// CaughtFromSearched is CaughtFrom without its early answer (couldProve): the search at every k.
func (c *IntervalChecker) CaughtFromSearched(maxK int64) (int64, bool) {
	return c.searchPower(c.thinned(), maxK)
}
