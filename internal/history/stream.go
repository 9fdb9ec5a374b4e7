package history

import "io"

// stream is one file's records put back in time order within a bounded window: a min-heap of
// the records read but not yet returned, by start (then by the order they were read).
type stream struct {
	file   int
	dec    decoder
	window int64 // ns
	max    int
	done   bool

	slab   []Record // the records held; heap and free index it
	keys   []int64  // each slot's sort key: its start, or the newest start seen for one unknown
	order  []int64  // each slot's place in the file's order, to keep ties stable
	heap   []int32
	free   []int32
	read   int64
	newest int64 // the latest start read
	seen   bool  // a start has been read
}

func newStream(file int, dec decoder, opts Options) *stream {
	return &stream{file: file, dec: dec, window: int64(opts.ReorderWindow), max: opts.ReorderMax}
}

// fill reads records until the earliest held one can be returned: the window has passed it,
// the window is full, or the file has ended.
func (s *stream) fill() error {
	for !s.done && !s.ripe() {
		slot := s.alloc()
		rec := &s.slab[slot]
		if err := s.dec.next(rec); err != nil {
			s.free = append(s.free, slot)
			if err == io.EOF {
				s.done = true
				return nil
			}
			return err
		}
		key := rec.StartNs
		if rec.Flags&StartUnknown != 0 {
			key = s.newest // no start to order it by: it goes out with the records read with it
		} else if !s.seen || key > s.newest {
			s.newest, s.seen = key, true
		}
		s.keys[slot], s.order[slot] = key, s.read
		s.read++
		s.push(slot)
	}
	return nil
}

// ripe reports whether the earliest held record can be returned before reading more.
func (s *stream) ripe() bool {
	if len(s.heap) == 0 {
		return false
	}
	return len(s.heap) >= s.max || s.newest-s.keys[s.heap[0]] > s.window
}

// ready reports whether the stream has a record to return (after fill).
func (s *stream) ready() bool { return len(s.heap) > 0 }

func (s *stream) headKey() int64 { return s.keys[s.heap[0]] }

// pop moves the earliest record into rec (rec keeps its own Headers backing array).
func (s *stream) pop(rec *Record) {
	slot := s.heap[0]
	last := len(s.heap) - 1
	s.heap[0] = s.heap[last]
	s.heap = s.heap[:last]
	if last > 0 {
		s.down(0)
	}
	held := &s.slab[slot]
	headers := append(rec.Headers[:0], held.Headers...)
	*rec = *held
	rec.Headers = headers
	s.free = append(s.free, slot)
}

// alloc returns a free slot, growing the slab up to the window's bound.
func (s *stream) alloc() int32 {
	if n := len(s.free); n > 0 {
		slot := s.free[n-1]
		s.free = s.free[:n-1]
		return slot
	}
	s.slab = append(s.slab, Record{})
	s.keys = append(s.keys, 0)
	s.order = append(s.order, 0)
	return int32(len(s.slab) - 1)
}

func (s *stream) less(a, b int32) bool {
	ka, kb := s.keys[a], s.keys[b]
	return ka < kb || ka == kb && s.order[a] < s.order[b]
}

func (s *stream) push(slot int32) {
	s.heap = append(s.heap, slot)
	i := len(s.heap) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !s.less(s.heap[i], s.heap[parent]) {
			break
		}
		s.heap[i], s.heap[parent] = s.heap[parent], s.heap[i]
		i = parent
	}
}

func (s *stream) down(i int) {
	n := len(s.heap)
	for {
		child := 2*i + 1
		if child >= n {
			return
		}
		if right := child + 1; right < n && s.less(s.heap[right], s.heap[child]) {
			child = right
		}
		if !s.less(s.heap[child], s.heap[i]) {
			return
		}
		s.heap[i], s.heap[child] = s.heap[child], s.heap[i]
		i = child
	}
}
