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
