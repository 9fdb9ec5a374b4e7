package trace

import (
	"encoding/json"
	"fmt"
	"testing"
)

// call is a request whose script call was sent at sent and answered at replied with reply.
func call(id string, sent, replied int64, reply string) Request {
	return Request{ID: id, Steps: []StepOut{{Op: "EVALSHA", Phase: "call", Reply: json.RawMessage(reply), SentUs: sent, RepliedUs: replied}}}
}

func heldMoment(limit int64, reqs ...Request) *Overshoot {
	n := int64(len(reqs))
	return &Overshoot{Held: &n, Limit: limit, Requests: reqs}
}

func TestDroppedNamesALimiterThatCountedFewerThanItHeld(t *testing.T) {
	// Answered one after another: the fourth was sent after three were admitted and held, yet
	// its limiter counted 1 (the three were dropped at its clock's tick).
	seq := heldMoment(3, call("r1", 0, 10, "[1, 1]"), call("r2", 20, 30, "[1, 2]"), call("r3", 40, 50, "[1, 3]"), call("r4", 60, 70, "[1, 1]"))
	if d := seq.Dropped(); d == nil || *d != (DroppedHeld{Request: "r4", Counted: 1, Held: 4}) {
		t.Errorf("sequential, the last counted 1 of 4: got %+v", d)
	}
	// Sent together: whatever order Redis ran them in, the last one found the others' writes.
	var overlapping []Request
	for i := 0; i < 6; i++ {
		overlapping = append(overlapping, call(fmt.Sprintf("r%d", i), int64(i), 100+int64(i), fmt.Sprintf("[1, %d]", 1+i%3)))
	}
	if d := heldMoment(5, overlapping...).Dropped(); d == nil || d.Counted != 3 || d.Held != 6 {
		t.Errorf("six at once, counted at most 3: got %+v, want counted 3 of 6", d)
	}
	// As a busy machine sends them: all in flight together, twenty counted up to the limit
	// before the clock's tick and the rest after it, from 1 again. The highest count is the
	// limit, one below how many they are; but the nine that counted 5 or fewer cannot all have
	// found fewer than nine of each other's writes.
	var busy []Request
	for i, n := range []int{20, 20, 18, 20, 20, 18, 17, 19, 20, 2, 3, 4, 5, 6, 9, 10, 2, 3, 3, 5, 5} {
		busy = append(busy, call(fmt.Sprintf("r%d", i), int64(i), 1000+int64(i), fmt.Sprintf("[1, %d]", n)))
	}
	if d := heldMoment(20, busy...).Dropped(); d == nil || d.Counted != 5 || d.Held != 9 || d.Request != "r20" {
		t.Errorf("twenty-one in flight together, nine counted 5 or fewer: got %+v, want r20 counted 5 of 9", d)
	}
}

func TestDroppedSaysNothingWithoutEvidence(t *testing.T) {
	cases := map[string]*Overshoot{
		// A race: both checks read 19 before either write; nothing was dropped.
		"naive's race": heldMoment(20,
			Request{ID: "r1", Steps: []StepOut{{Op: "ZCARD", Phase: "check", Reply: json.RawMessage("19"), SentUs: 0, RepliedUs: 5},
				{Op: "ZADD", Phase: "write", Reply: json.RawMessage("1"), SentUs: 10, RepliedUs: 15}}},
			Request{ID: "r2", Steps: []StepOut{{Op: "ZCARD", Phase: "check", Reply: json.RawMessage("19"), SentUs: 1, RepliedUs: 6},
				{Op: "ZADD", Phase: "write", Reply: json.RawMessage("1"), SentUs: 11, RepliedUs: 16}}}),
		// A flag alone is no count.
		"a flag": heldMoment(2, call("r1", 0, 10, "1"), call("r2", 20, 30, "1"), call("r3", 40, 50, "1")),
		// What remains reads 0 once the limit is reached: no count.
		"what remains": heldMoment(2, call("r1", 0, 10, "[1, 1]"), call("r2", 20, 30, "[1, 0]"), call("r3", 40, 50, "[1, 1]")),
		// A count read before the request's own write is one lower: no evidence of a drop.
		"a count before the write": heldMoment(3, call("r1", 0, 10, "[1, 0]"), call("r2", 20, 30, "[1, 1]"), call("r3", 40, 50, "[1, 2]")),
		// Two elements that could be counts: no telling which.
		"two candidates": heldMoment(5, call("r1", 0, 10, "[1, 1, 5]"), call("r2", 20, 30, "[1, 2, 4]"), call("r3", 40, 50, "[1, 1, 3]")),
		"a window":       {Limit: 2, Requests: []Request{call("r1", 0, 10, "[1, 1]"), call("r2", 20, 30, "[1, 1]"), call("r3", 40, 50, "[1, 1]")}},
	}
	for name, o := range cases {
		if d := o.Dropped(); d != nil {
			t.Errorf("%s: claimed a drop: %+v", name, d)
		}
	}
	// Each count is every request held: nothing dropped, whatever else the limiter did wrong.
	ok := heldMoment(4, call("r1", 0, 10, "[1, 1]"), call("r2", 20, 30, "[1, 2]"), call("r3", 40, 50, "[1, 3]"), call("r4", 60, 70, "[1, 4]"))
	if d := ok.Dropped(); d != nil {
		t.Errorf("an off-by-one that counted every held request: claimed a drop %+v", d)
	}
}

// Checks sent together, their writes after: the last check Redis ran may still have run before
// the others' writes, so a low count there is the race, not a drop.
func TestDroppedTellsARaceFromADrop(t *testing.T) {
	var reqs []Request
	for i := int64(0); i < 6; i++ {
		reqs = append(reqs, Request{ID: fmt.Sprintf("r%d", i), Steps: []StepOut{
			{Op: "ZCARD", Phase: "check", Reply: json.RawMessage(fmt.Sprint(15 + i%2)), SentUs: i, RepliedUs: 100 + i},
			{Op: "ZADD", Phase: "write", Reply: json.RawMessage("1"), SentUs: 200 + i, RepliedUs: 300 + i}}})
	}
	if d := heldMoment(20, reqs...).Dropped(); d != nil {
		t.Errorf("six checks sent before any write: claimed a drop %+v", d)
	}
}
