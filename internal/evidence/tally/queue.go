package tally

import "sort"

// Count is how many admits carried one millisecond.
type Count struct{ Ms, N int64 }

// Queue holds msCounts in ascending ms, one per millisecond that saw admits (never one per
// elapsed millisecond): a deque on a slice that reuses its array, so a steady run stops
// allocating once the queue has grown to its working size.
type Queue struct {
	items []Count
	head  int
}

func (q *Queue) Len() int        { return len(q.items) - q.head }
func (q *Queue) At(i int) Count  { return q.items[q.head+i] }
func (q *Queue) Front() Count    { return q.items[q.head] }
func (q *Queue) Back() Count     { return q.items[len(q.items)-1] }
func (q *Queue) PopFront() Count { e := q.items[q.head]; q.head++; q.reset(); return e }

// Clone is a copy of the queue that shares no memory with it.
func (q *Queue) Clone() Queue { return Queue{items: append([]Count(nil), q.items[q.head:]...)} }

// reset reuses the array from its start once the queue is empty.
func (q *Queue) reset() {
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

// Add counts n admits at ms. Admits arrive nearly in time order, so the common cases are the
// newest millisecond again or a newer one; an older one is placed by binary search.
func (q *Queue) Add(ms, n int64) { q.put(ms, n, sum) }

// KeepMin records v at ms, keeping the least value given for each millisecond.
func (q *Queue) KeepMin(ms, v int64) { q.put(ms, v, least) }

func sum(a, b int64) int64   { return a + b }
func least(a, b int64) int64 { return min(a, b) }

func (q *Queue) put(ms, n int64, combine func(a, b int64) int64) {
	if q.Len() > 0 {
		switch last := &q.items[len(q.items)-1]; {
		case last.Ms == ms:
			last.N = combine(last.N, n)
			return
		case last.Ms > ms:
			q.insert(ms, n, combine)
			return
		}
	}
	q.makeRoom()
	q.items = append(q.items, Count{ms, n})
}

func (q *Queue) insert(ms, n int64, combine func(a, b int64) int64) {
	live := q.items[q.head:]
	i := sort.Search(len(live), func(j int) bool { return live[j].Ms >= ms })
	if live[i].Ms == ms {
		live[i].N = combine(live[i].N, n)
		return
	}
	q.makeRoom()
	q.items = append(q.items, Count{})
	live = q.items[q.head:]
	copy(live[i+1:], live[i:])
	live[i] = Count{ms, n}
}

// makeRoom slides the live items to the array's start when the array is full and at least half
// of it is already consumed, so the array grows only when the live items need it.
func (q *Queue) makeRoom() {
	if len(q.items) == cap(q.items) && q.head > 0 && q.head >= len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
	}
}

// FloorDiv is a/b rounded down, so windows before the epoch line up too.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
