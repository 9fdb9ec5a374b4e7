package overshoot

// A timeline places what the evidence proved at the time it was about, not at the time it was
// judged: the interval evidence judges a start five windows and more after it, and judge reads a
// whole file before anything is drawn, so a chart drawn from the judging would rise at the end.

// TimedCount is the most admits one window certainly held among the starts judged in the bucket
// of time that begins AtUs (the checker's clock, µs).
type TimedCount struct {
	AtUs int64
	N    int64
}

// timelineBuckets bounds a timeline: past it, neighbouring buckets merge in pairs (the highest
// count kept), so a long run keeps its peaks in bounded memory.
const timelineBuckets = 1024

// timelineBucketUs is a timeline's first resolution.
const timelineBucketUs = 100_000

// timeline is the counts a checker proved, by bucket of time; only buckets with a count are kept.
type timeline struct {
	bucketUs int64
	counts   []TimedCount
}

// note records that n admits were certainly in one window at atUs.
func (t *timeline) note(atUs, n int64) {
	if n <= 0 {
		return
	}
	if t.bucketUs == 0 {
		t.bucketUs = timelineBucketUs
	}
	at := floorTo(atUs, t.bucketUs)
	for i := len(t.counts) - 1; i >= 0 && t.counts[i].AtUs >= at; i-- {
		if t.counts[i].AtUs == at {
			t.counts[i].N = max(t.counts[i].N, n)
			return
		}
	}
	t.counts = append(t.counts, TimedCount{at, n})
	for i := len(t.counts) - 1; i > 0 && t.counts[i-1].AtUs > t.counts[i].AtUs; i-- {
		t.counts[i-1], t.counts[i] = t.counts[i], t.counts[i-1] // a start judged out of order
	}
	if len(t.counts) > timelineBuckets {
		t.coarsen()
	}
}

// coarsen doubles the bucket, merging the counts that fall together.
func (t *timeline) coarsen() {
	t.bucketUs *= 2
	merged := t.counts[:0]
	for _, c := range t.counts {
		c.AtUs = floorTo(c.AtUs, t.bucketUs)
		if n := len(merged); n > 0 && merged[n-1].AtUs == c.AtUs {
			merged[n-1].N = max(merged[n-1].N, c.N)
			continue
		}
		merged = append(merged, c)
	}
	t.counts = merged
}

// snapshot is a copy of the counts, in time order.
func (t *timeline) snapshot() []TimedCount { return append([]TimedCount(nil), t.counts...) }

func floorTo(v, unit int64) int64 {
	q := v / unit
	if v%unit < 0 {
		q--
	}
	return q * unit
}

// Timeline implements Checker: the most admits one window certainly held, by bucket of time (µs
// on the checker's clock), in time order.
func (c *IntervalChecker) Timeline() []TimedCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeline.snapshot()
}
