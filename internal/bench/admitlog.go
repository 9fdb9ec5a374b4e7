package bench

import (
	"sort"
	"sync"
)

// msCount is how many admits carried one millisecond.
type msCount struct{ ms, n int64 }

// msQueue holds msCounts in ascending ms, one per millisecond that saw admits (never one per
// elapsed millisecond): a deque on a slice that reuses its array, so a steady run stops
// allocating once the queue has grown to its working size.
type msQueue struct {
	items []msCount
	head  int
}

func (q *msQueue) len() int          { return len(q.items) - q.head }
func (q *msQueue) at(i int) msCount  { return q.items[q.head+i] }
func (q *msQueue) front() msCount    { return q.items[q.head] }
func (q *msQueue) back() msCount     { return q.items[len(q.items)-1] }
func (q *msQueue) popFront() msCount { e := q.items[q.head]; q.head++; q.reset(); return e }

// reset reuses the array from its start once the queue is empty.
func (q *msQueue) reset() {
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

// add counts n admits at ms. Admits arrive nearly in time order, so the common cases are the
// newest millisecond again or a newer one; an older one is placed by binary search.
func (q *msQueue) add(ms, n int64) { q.put(ms, n, sum) }

// keepMin records v at ms, keeping the least value given for each millisecond.
func (q *msQueue) keepMin(ms, v int64) { q.put(ms, v, least) }

func sum(a, b int64) int64   { return a + b }
func least(a, b int64) int64 { return min(a, b) }

func (q *msQueue) put(ms, n int64, combine func(a, b int64) int64) {
	if q.len() > 0 {
		switch last := &q.items[len(q.items)-1]; {
		case last.ms == ms:
			last.n = combine(last.n, n)
			return
		case last.ms > ms:
			q.insert(ms, n, combine)
			return
		}
	}
	q.makeRoom()
	q.items = append(q.items, msCount{ms, n})
}

func (q *msQueue) insert(ms, n int64, combine func(a, b int64) int64) {
	live := q.items[q.head:]
	i := sort.Search(len(live), func(j int) bool { return live[j].ms >= ms })
	if live[i].ms == ms {
		live[i].n = combine(live[i].n, n)
		return
	}
	q.makeRoom()
	q.items = append(q.items, msCount{})
	live = q.items[q.head:]
	copy(live[i+1:], live[i:])
	live[i] = msCount{ms, n}
}

// makeRoom slides the live items to the array's start when the array is full and at least half
// of it is already consumed, so the array grows only when the live items need it.
func (q *msQueue) makeRoom() {
	if len(q.items) == cap(q.items) && q.head > 0 && q.head >= len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
}

// admitLog collects admitted now values and settles each millisecond that saw admits, in time
// order, once no more admits for it can arrive: horizon ms behind the newest one. Only the
// milliseconds still open are kept, so its memory follows the admits within the horizon, and
// neither adding nor settling walks milliseconds in which nothing was admitted.
type admitLog struct {
	mu       sync.Mutex
	pending  msQueue // admits for milliseconds after settled, ascending
	started  bool
	settled  int64 // every ms <= settled has been handed to settleFn
	newest   int64 // newest ms seen
	horizon  int64 // how far behind newest an admit may still arrive
	late     int64 // admits for ms already settled: left out, never moved (moving one would invent evidence)
	settleFn func(ms, n int64)
}

func newAdmitLog(horizon int64, settle func(ms, n int64)) *admitLog {
	return &admitLog{horizon: horizon, settleFn: settle}
}

func (r *admitLog) add(ms int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		// Open the horizon behind the first admit too: the next one may carry an older now.
		r.started = true
		r.settled = ms - r.horizon - 1
		r.newest = ms
	}
	if ms <= r.settled {
		// Later than the horizon (the call timeout) allows: its window is already judged.
		// Counting it elsewhere could report overshoot that never happened, so it is left out.
		r.late++
		return
	}
	r.newest = max(r.newest, ms)
	r.pending.add(ms, 1)
	r.advance(r.newest - r.horizon)
}

// advance settles every pending millisecond up to through, oldest first.
func (r *admitLog) advance(through int64) {
	for r.pending.len() > 0 && r.pending.front().ms <= through {
		e := r.pending.popFront()
		r.settleFn(e.ms, e.n)
	}
	r.settled = max(r.settled, through)
}

func (r *admitLog) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		r.advance(r.newest)
	}
}
