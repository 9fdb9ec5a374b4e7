package trace

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
)

// DroppedHeld is a limiter caught counting fewer requests than it certainly held, at the first
// overshoot of a concurrency limit: Request's own reply (or its check's count) said Counted,
// while Held requests, itself among them, were held throughout its call; or, of script calls,
// Held requests (Request the one that counted most among them) each counted Counted or fewer,
// which the last of them Redis ran could not have without a drop. A limiter that forgets
// a running request (a stale time shorter than what its clock can tell apart drops it at the
// clock's next tick) admits others beside it: how it overshot.
type DroppedHeld struct {
	Request string `json:"request"`
	Counted int64  `json:"counted"`
	Held    int64  `json:"held"`
}

// droppedMargin is how many fewer than it certainly held a limiter must count for the count to
// be told a drop: a count taken before the request's own write (a check's reply, or a script
// that replies with the count it read) reads one lower than one taken after, and the
// difference is no evidence.
const droppedMargin = 2

// Dropped finds, among the requests behind a concurrency overshoot, the one whose count reads
// furthest below the requests certainly held during its call; nil when none reads below them
// by droppedMargin or more, or when no count can be read.
//
// The rule. Every request behind the moment was held at the moment, which came after each of
// their acquires replied (the witness counts a request from its acquire's reply until its
// release is sent). So a request Z whose acquire was answered before request Y's was sent was
// held throughout Y's call: Redis had Z in the limiter's state when it ran Y, and a limiter that
// remembers what it admitted for as long as the witness counts it (stale-after: the witness
// counts no request decided longer ago) counted Z. Y's count, taken after its own write,
// is then at least the number of such Z plus one; one taken before it at least that number.
// Requests the trace no longer holds only lower the number found, so a count below it is a
// drop whatever is missing. And when each count was taken in the same script call as the
// request's write, whatever the order Redis ran the calls in: of any j of them, the one it ran
// last found the other j-1 writes in place (none was released before the moment), so with
// nothing dropped it counted at least j, and the highest count among any j is at least j. Put
// the counts in ascending order: the j-th is then at least j, and one at j-2 or below (the
// margin: a count read before the write is one lower) is a drop, whether the calls overlapped
// or not. On a busy machine the calls of a moment are often all in flight together, and this
// rule is then the only one that can see the drop.
//
// What a count is: the reply of a check that counts (ZCARD: before the request's own write,
// so one more is its count after), or, for a script, the one element of its reply after the first
// (or the reply itself when it is a number) that is a whole number from 1 to the limit in every
// request's reply and not the same in all of them: a flag is the same in every admitted reply,
// and a count of what remains reads 0 once the limit is reached. A reply with several such
// elements says nothing here.
func (o *Overshoot) Dropped() *DroppedHeld {
	if o == nil || o.Held == nil || len(o.Requests) < 2 {
		return nil
	}
	element := callCountElement(o.Requests, o.Limit)
	var worst *DroppedHeld
	consider := func(d DroppedHeld) {
		if d.Held-d.Counted >= droppedMargin && (worst == nil || d.Held-d.Counted > worst.Held-worst.Counted) {
			worst = &d
		}
	}
	var atomics []DroppedHeld // each atomic call's count
	for _, y := range o.Requests {
		sent, counted, atomic, ok := countOf(y, element)
		if !ok {
			continue
		}
		held := int64(1)
		for _, z := range o.Requests {
			if at, ok := admittedAt(z); ok && z.ID != y.ID && at < sent {
				held++
			}
		}
		consider(DroppedHeld{Request: y.ID, Counted: counted, Held: held})
		if atomic { // a check's count was read before the others' writes may have landed
			atomics = append(atomics, DroppedHeld{Request: y.ID, Counted: counted})
		}
	}
	slices.SortStableFunc(atomics, func(a, b DroppedHeld) int { return cmp.Compare(a.Counted, b.Counted) })
	for j, d := range atomics {
		d.Held = int64(j) + 1 // the j+1 lowest counts, d's the highest of them
		consider(d)
	}
	return worst
}

// countOf is when r's count was taken (its check or call sent) and the count after its own
// write; atomic when the count and the write were one script call; ok is false when r's steps
// carry no count.
func countOf(r Request, element int) (sent, counted int64, atomic, ok bool) {
	for _, s := range r.Steps {
		switch {
		case s.Phase == "check" && s.Op == "ZCARD":
			n, ok := wholeNumber(s.Reply)
			return s.SentUs, n + 1, false, ok
		case s.Phase == "call" && element >= 0:
			n, ok := replyElement(s.Reply, element)
			return s.SentUs, n, true, ok
		}
	}
	return 0, 0, false, false
}

// admittedAt is when r's acquire was answered: its first write (the member added) or its
// script call.
func admittedAt(r Request) (int64, bool) {
	for _, s := range r.Steps {
		if s.Phase == "write" || s.Phase == "call" {
			return s.RepliedUs, true
		}
	}
	return 0, false
}

// callCountElement is the element of the script calls' replies that counts the held requests
// (0 for a reply that is a number; 1, 2, ... for an array's elements after the first), or -1
// when there is not exactly one (Dropped says what qualifies).
func callCountElement(reqs []Request, limit int64) int {
	var replies []json.RawMessage
	for _, r := range reqs {
		for _, s := range r.Steps {
			if s.Phase == "call" {
				replies = append(replies, s.Reply)
				break
			}
		}
	}
	if len(replies) < 2 {
		return -1
	}
	width := math.MaxInt
	for _, raw := range replies {
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil {
			width = min(width, len(arr))
		} else {
			width = min(width, 1)
		}
	}
	found := -1
	for e := 0; e < width; e++ {
		if e == 0 && width > 1 {
			continue // an array's first element: the flag, by every library's convention
		}
		ok, first, varies := true, int64(0), false
		for i, raw := range replies {
			n, isNum := replyElement(raw, e)
			if !isNum || n < 1 || n > limit {
				ok = false
				break
			}
			if i == 0 {
				first = n
			}
			varies = varies || n != first
		}
		if ok && varies {
			if found >= 0 {
				return -1 // two elements look like counts: no telling which
			}
			found = e
		}
	}
	return found
}

// replyElement is element e of an array reply, or the reply itself for e == 0 when it is a
// number, as a whole number.
func replyElement(raw json.RawMessage, e int) (int64, bool) {
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		if e >= len(arr) {
			return 0, false
		}
		return wholeNumber(arr[e])
	}
	if e != 0 {
		return 0, false
	}
	return wholeNumber(raw)
}

// wholeNumber is a JSON number that is a whole number.
func wholeNumber(raw json.RawMessage) (int64, bool) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
