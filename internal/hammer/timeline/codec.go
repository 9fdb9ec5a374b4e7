package timeline

import (
	"encoding/binary"
	"errors"

	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
)

// A flush is what a process publishes of one strategy every flushInterval: the calls added
// since the last one and the low-water mark they complete (every call sent before it, on the
// process's clock, is in this flush or an earlier one; complete: every call of the run is).
// Times are µs since the process's clock base; each call costs about a dozen bytes:
//
//	varint mark (-1: complete), uvarint count, then per decision: uvarint key index,
//	varint sent - previous sent, uvarint replied - sent, varint stamp_lo - previous stamp_lo,
//	uvarint stamp_hi - stamp_lo, byte flags (outcome, release ok, abandoned, released),
//	and when released: varint released - replied.
type flush struct {
	mark     int64
	complete bool
	calls    []evidence.Decision
}

const (
	flagReleaseOK = 1 << 2
	flagAbandoned = 1 << 3
	flagReleased  = 1 << 4
	outcomeMask   = 3
)

// encoder appends calls to one flush's body, each relative to the one before.
type encoder struct {
	body             []byte
	n                int
	prevSent, prevLo int64
	offset           int64 // µs from the clock's base to the run's begin, added to every time
	scratch          [binary.MaxVarintLen64]byte
}

func (e *encoder) varint(v int64) {
	e.body = append(e.body, e.scratch[:binary.PutVarint(e.scratch[:], v)]...)
}

func (e *encoder) uvarint(v uint64) {
	e.body = append(e.body, e.scratch[:binary.PutUvarint(e.scratch[:], v)]...)
}

func (e *encoder) add(c evidence.Decision, server bool) {
	sent := c.SentUs + e.offset
	if server {
		// Stamps on the server's clock are the call's own [sent, replied]: the reader puts them
		// back once the call is on the server's timeline.
		c.ClockLoUs, c.ClockHiUs = 0, 0
	}
	e.uvarint(uint64(c.Key))
	e.varint(sent - e.prevSent)
	e.uvarint(uint64(max(0, c.RepliedUs-c.SentUs)))
	e.varint(c.ClockLoUs - e.prevLo)
	e.uvarint(uint64(max(0, c.ClockHiUs-c.ClockLoUs)))
	flags := byte(c.Outcome) & outcomeMask
	if c.ReleaseOK {
		flags |= flagReleaseOK
	}
	if c.Abandoned {
		flags |= flagAbandoned
	}
	if c.ReleasedUs != 0 {
		flags |= flagReleased
	}
	e.body = append(e.body, flags)
	if c.ReleasedUs != 0 {
		e.varint(c.ReleasedUs - c.RepliedUs)
	}
	e.prevSent, e.prevLo = sent, c.ClockLoUs
	e.n++
}

// take ends the flush: its bytes with mark (µs since the run's begin, or refusal.Forever once
// complete) in front, and the encoder ready for the next.
func (e *encoder) take(mark int64) []byte {
	var head []byte
	var b [binary.MaxVarintLen64]byte
	if mark == refusal.Forever {
		head = append(head, b[:binary.PutVarint(b[:], -1)]...)
	} else {
		head = append(head, b[:binary.PutVarint(b[:], mark+e.offset)]...)
	}
	head = append(head, b[:binary.PutUvarint(b[:], uint64(e.n))]...)
	out := append(head, e.body...)
	e.body, e.n = e.body[:0], 0
	return out
}

var errCorrupt = errors.New("a flush of calls does not decode (left by another version?)")

// decode reads one flush; prev carries the previous call's sent and stamp across the flushes
// of one process and strategy, read in the order they were published.
func decode(b []byte, prev *[2]int64) (flush, error) {
	var f flush
	r := reader{b: b}
	mark := r.varint()
	n := r.uvarint()
	if r.err || n > uint64(len(b)) {
		return f, errCorrupt
	}
	f.mark, f.complete = mark, mark == -1
	f.calls = make([]evidence.Decision, 0, n)
	for range n {
		key := r.uvarint()
		sent := prev[0] + r.varint()
		replied := sent + int64(r.uvarint())
		lo := prev[1] + r.varint()
		hi := lo + int64(r.uvarint())
		flags := r.byte()
		c := evidence.Decision{Key: int32(key), SentUs: sent, RepliedUs: replied, ClockLoUs: lo, ClockHiUs: hi,
			Outcome: evidence.Outcome(flags & outcomeMask), ReleaseOK: flags&flagReleaseOK != 0, Abandoned: flags&flagAbandoned != 0}
		if flags&flagReleased != 0 {
			c.ReleasedUs = replied + r.varint()
		}
		if r.err || c.Outcome > evidence.Unknown || key > 1<<20 {
			return f, errCorrupt
		}
		prev[0], prev[1] = sent, lo
		f.calls = append(f.calls, c)
	}
	if r.err || len(r.b) != 0 {
		return f, errCorrupt
	}
	return f, nil
}

type reader struct {
	b   []byte
	err bool
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}
