package history

import (
	"io"
	"sort"
)

// stream is one file's records put back in time order within a bounded window: the records
// read but not yet returned, kept sorted by start (then by the order they were read). A tool
// writes nearly in order, so a record mostly goes at the end of the queue, or a few places
// before it: cheaper than a heap's log n moves for every record.
type stream struct {
	file   int
	dec    decoder
	window int64 // ns
	max    int
	done   bool

	// The records held, in chunks so that growing never copies them; queue (sorted, from
	// queue[head]) and free index them by slot.
	chunks [][]held
	slots  int32
	queue  []int32
	head   int
	free   []int32
	popped int32 // the slot last returned, freed at the next pop: Record points into it
	read   int64
	newest int64 // the latest start read
	seen   bool  // a start has been read
}

// held is a record in the window.
type held struct {
	rec   Record
	key   int64 // its start, or the newest start read for one unknown
	order int64 // its place in the file's order, to keep ties stable
}

const chunkBits = 12

func (s *stream) at(slot int32) *held {
	return &s.chunks[slot>>chunkBits][slot&(1<<chunkBits-1)]
}

func newStream(file int, dec decoder, opts Options) *stream {
	return &stream{file: file, dec: dec, window: int64(opts.ReorderWindow), max: opts.ReorderMax, popped: -1}
}

// fill reads records until the earliest held one can be returned: the window has passed it,
// the window is full, or the file has ended.
func (s *stream) fill() error {
	for !s.done && !s.ripe() {
		slot := s.alloc()
		h := s.at(slot)
		if err := s.dec.next(&h.rec); err != nil {
			s.free = append(s.free, slot)
			if err == io.EOF {
				s.done = true
				return nil
			}
			return err
		}
		key := h.rec.StartNs
		if h.rec.Flags&StartUnknown != 0 {
			key = s.newest // no start to order it by: it goes out with the records read with it
		} else if !s.seen || key > s.newest {
			s.newest, s.seen = key, true
		}
		h.key, h.order = key, s.read
		s.read++
		s.insert(slot)
	}
	return nil
}

func (s *stream) held() int { return len(s.queue) - s.head }

// ripe reports whether the earliest held record can be returned before reading more.
func (s *stream) ripe() bool {
	if s.held() == 0 {
		return false
	}
	return s.held() >= s.max || s.newest-s.headKey() > s.window
}

// ready reports whether the stream has a record to return (after fill).
func (s *stream) ready() bool { return s.held() > 0 }

func (s *stream) headKey() int64 { return s.at(s.queue[s.head]).key }

// pop returns the earliest record, valid until the next pop.
func (s *stream) pop() *Record {
	if s.popped >= 0 {
		s.free = append(s.free, s.popped)
	}
	s.popped = s.queue[s.head]
	s.head++
	return &s.at(s.popped).rec
}

// alloc returns a free slot, adding a chunk when every one is taken (at most the window's
// bound, plus the one last returned).
func (s *stream) alloc() int32 {
	if n := len(s.free); n > 0 {
		slot := s.free[n-1]
		s.free = s.free[:n-1]
		return slot
	}
	slot := s.slots
	if int(slot>>chunkBits) == len(s.chunks) {
		s.chunks = append(s.chunks, make([]held, 1<<chunkBits))
	}
	s.slots++
	return slot
}

func (s *stream) less(a, b int32) bool {
	ha, hb := s.at(a), s.at(b)
	return ha.key < hb.key || ha.key == hb.key && ha.order < hb.order
}

// insert puts slot in its place in the queue, searching back from the end.
func (s *stream) insert(slot int32) {
	if s.head > 0 && s.head >= len(s.queue)/2 {
		n := copy(s.queue, s.queue[s.head:])
		s.queue, s.head = s.queue[:n], 0
	}
	q := s.queue[s.head:]
	pos := len(q)
	if pos > 0 && s.less(slot, q[pos-1]) {
		pos = sort.Search(len(q), func(i int) bool { return s.less(slot, q[i]) })
	}
	s.queue = append(s.queue, 0)
	q = s.queue[s.head:]
	copy(q[pos+1:], q[pos:])
	q[pos] = slot
}
