package trace

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// A reply is kept as Redis sent it, in a fixed size, and published as JSON: numbers, strings,
// arrays, nil, errors; text too long to keep is marked cut, never shown as whole.
func TestRepliesArePublishedAsRedisSentThem(t *testing.T) {
	cases := []struct {
		set  func(r *Reply)
		want string
	}{
		{func(r *Reply) { r.SetInt(19) }, `19`},
		{func(r *Reply) { r.SetText(Bulk, "19") }, `"19"`},
		{func(r *Reply) { r.SetNil() }, `null`},
		{func(r *Reply) { r.SetArray([]any{int64(1), int64(21)}) }, `[1,21]`},
		{func(r *Reply) { r.SetArray([]any{int64(1), int64(2), int64(3), int64(4), int64(5)}) }, `"{1, 2, 3, 4, …}"`},
		{func(r *Reply) { r.SetArray([]any{"1", int64(21), nil}) }, `"{\"1\", 21, nil}"`},
		{func(r *Reply) { r.SetText(Error, "NOSCRIPT No matching script") }, `{"error":"NOSCRIPT No matching script"}`},
		{func(r *Reply) { r.SetText(Bulk, "abcdefghijklmnopqrstuvwxyz0123456789") }, `"abcdefghijklmnopqrstuvwxyz012345…"`},
		{func(*Reply) {}, `null`},
		{func(r *Reply) { r.SetInts(2, []int64{1, 21}) }, `[1,21]`},
		{func(r *Reply) { r.SetInts(5, []int64{1, 2, 3, 4}) }, `"{1, 2, 3, 4, …}"`},
	}
	for _, c := range cases {
		var r Reply
		c.set(&r)
		if got := string(r.JSON()); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

// An array of integers decoded without boxing is recorded as SetArray records the same array.
func TestIntsAreRecordedAsTheirArray(t *testing.T) {
	for _, ints := range [][]int64{{}, {1}, {0, 7, -2}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6}} {
		elems := make([]any, len(ints))
		for i, n := range ints {
			elems[i] = n
		}
		var boxed, decoded Reply
		boxed.SetArray(elems)
		decoded.SetInts(len(ints), ints)
		if boxed != decoded {
			t.Errorf("%v: SetInts %+v, SetArray %+v", ints, decoded, boxed)
		}
	}
}

// Recording a decision allocates nothing: the step records and the rings are fixed-size, made
// once per worker, and hold no pointer (the garbage collector never scans them).
func TestRecordingADecisionAllocatesNothing(t *testing.T) {
	rec := NewRecorder(time.Now(), 3, 8, false)
	elems := []any{int64(1), int64(20)}
	allocs := testing.AllocsPerRun(1000, func() {
		rec.Begin(0)
		for _, op := range []string{"zremrangebyscore", "zcard", "zadd", "pexpire"} {
			s := rec.Step(op, Check)
			s.Reply.SetInt(1)
			s.SentUs, s.RepliedUs = rec.Since(), rec.Since()
		}
		rec.Step("evalsha", Call).Reply.SetArray(elems)
		rec.Keep(true, 1, 2, 3, 0)
		rec.Begin(0)
		rec.Keep(false, 1, 2, 3, 0)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per decision", allocs)
	}
}

// Request ids are unique across workers without a shared counter, and the rings keep the
// latest decisions only.
func TestRecordersNameRequestsApartAndKeepTheLatest(t *testing.T) {
	a, b := NewRecorder(time.Now(), 0, 2, false), NewRecorder(time.Now(), 1, 2, false)
	seen := map[uint64]bool{}
	for i := 0; i < AdmitRing+10; i++ {
		for _, r := range []*Recorder{a, b} {
			id := r.Begin(0)
			if seen[id] {
				t.Fatalf("id %d given twice", id)
			}
			seen[id] = true
			r.Keep(true, int64(i), 0, 0, 0)
		}
	}
	kept := a.Admitted(nil, func(*Record) bool { return true })
	if len(kept) != AdmitRing {
		t.Fatalf("kept %d, want the ring's %d", len(kept), AdmitRing)
	}
	for _, r := range kept {
		if r.StampMs < 10 {
			t.Errorf("an overwritten decision (stamp %d) is still kept", r.StampMs)
		}
	}
}

// Recorders sharing a lane find their own records only, and the lane keeps as many of each
// worker's latest decisions as rings of their own would.
func TestRecordersOfALaneKeepTheirOwn(t *testing.T) {
	recs := NewRecorders(time.Now(), []int{1, 4, 7}, 9, false)
	for i := 0; i < AdmitRing+10; i++ {
		for _, r := range recs {
			r.Begin(int(r.Worker()))
			r.Keep(true, int64(i), 0, 0, 0)
		}
	}
	for _, r := range recs {
		kept := r.Admitted(nil, func(*Record) bool { return true })
		if len(kept) != AdmitRing {
			t.Fatalf("worker %d: kept %d, want the ring's %d", r.Worker(), len(kept), AdmitRing)
		}
		for _, rec := range kept {
			if int(rec.Worker) != r.Worker() || int(rec.Key) != r.Worker() || rec.StampMs < 10 {
				t.Fatalf("worker %d found %+v", r.Worker(), rec)
			}
		}
	}
}

// AdmittedOf reads what several recorders kept, each lane once: every record of theirs, and
// none of a worker of the lane that is not among them.
func TestAdmittedOfReadsTheRecordersOfEachLane(t *testing.T) {
	begin := time.Now()
	laneA := NewRecorders(begin, []int{0, 2}, 4, false)
	laneB := NewRecorders(begin, []int{1, 3}, 4, false)
	for _, r := range append(append([]*Recorder{}, laneA...), laneB...) {
		for i := 0; i < 3; i++ {
			r.Begin(r.Worker())
			r.Keep(true, int64(i), 0, 0, 0)
		}
	}
	all := func(*Record) bool { return true }
	if got := AdmittedOf(append(append([]*Recorder{}, laneA...), laneB...), nil, all); len(got) != 12 {
		t.Fatalf("found %d records of the four workers, want 12", len(got))
	}
	got := AdmittedOf([]*Recorder{laneA[1], laneB[0]}, nil, all)
	for _, rec := range got {
		if rec.Worker != 2 && rec.Worker != 1 {
			t.Fatalf("found a record of worker %d, not asked for", rec.Worker)
		}
	}
	if len(got) != 6 {
		t.Fatalf("found %d records of workers 2 and 1, want 6", len(got))
	}
}

// Held for the refusal judges, the refused ring keeps the refusals not yet judged: once full
// it drops a new refusal rather than overwrite one the judges have not seen, and once they
// have judged some (the mark moves) new refusals take those places, oldest first. Unheld, it
// keeps the latest.
func TestTheRefusedRingHoldsWhatIsNotJudgedYet(t *testing.T) {
	held, plain := NewRecorder(time.Now(), 0, 1, false), NewRecorder(time.Now(), 0, 1, false)
	var judged JudgedMark
	held.HoldUnjudged(&judged)
	sentOf := func(r *Recorder) (lo, hi int64) {
		lo = 1 << 62
		for _, rec := range r.Refused(nil, func(*Record) bool { return true }) {
			lo, hi = min(lo, rec.SentUs), max(hi, rec.SentUs)
		}
		return lo, hi
	}
	keep := func(from, to int64) {
		for us := from; us < to; us++ {
			for _, r := range []*Recorder{held, plain} {
				r.Begin(0)
				r.Keep(false, 0, us, us+1, 0)
			}
		}
	}
	keep(0, 2*RefuseRing)
	if lo, hi := sentOf(held); lo != 0 || hi != RefuseRing-1 {
		t.Fatalf("held, nothing judged: refusals sent %d-%d kept, want the first %d (0-%d)", lo, hi, RefuseRing, RefuseRing-1)
	}
	if lo, hi := sentOf(plain); lo != RefuseRing || hi != 2*RefuseRing-1 {
		t.Fatalf("unheld: refusals sent %d-%d kept, want the latest", lo, hi)
	}
	judged.Set(10) // the refusals sent at 0-9 are judged: ten places for new ones
	keep(2*RefuseRing, 2*RefuseRing+20)
	kept := held.Refused(nil, func(*Record) bool { return true })
	if lo, _ := sentOf(held); len(kept) != RefuseRing || lo != 10 {
		t.Fatalf("after Judged(10): %d kept from %d, want %d from 10", len(kept), lo, RefuseRing)
	}
	newer := 0
	for _, rec := range kept {
		if rec.SentUs >= 2*RefuseRing {
			newer++
		}
	}
	if newer != 10 {
		t.Fatalf("%d of the 20 new refusals kept in the 10 judged places, want 10", newer)
	}
}

// While the judges keep up, a held ring keeps every refusal not judged yet in a few slots at
// its front, used over and over, and never one the judges are done with.
func TestAHeldRingKeepsTheUnjudgedInAFewSlots(t *testing.T) {
	var judged JudgedMark
	r := NewRecorder(time.Now(), 0, 1, false)
	r.HoldUnjudged(&judged)
	for us := int64(0); us < 10*RefuseRing; us++ {
		mark := us - us%7 // judged up to a few refusals ago, in steps
		judged.Set(mark)
		r.Begin(0)
		r.Keep(false, 0, us, us+1, 0)
		kept := r.Refused(nil, func(*Record) bool { return true })
		if int64(len(kept)) != us-mark+1 {
			t.Fatalf("at %d: %d refusals kept, want the %d sent from the mark %d on", us, len(kept), us-mark+1, mark)
		}
		for i, rec := range kept {
			if rec.SentUs != mark+int64(i) {
				t.Fatalf("at %d: the %dth refusal kept was sent at %d, want %d", us, i, rec.SentUs, mark+int64(i))
			}
		}
		if r.lane.refused.tail > 2*7+compactAfter {
			t.Fatalf("at %d: the ring's %d slots in use, for %d refusals", us, r.lane.refused.tail, len(kept))
		}
	}
}

// A request is raced when its check was answered before another's write was sent: it cannot
// have counted that write. One whose check came after every other write is not.
func TestRacedMarksTheChecksThatCouldNotSeeAWrite(t *testing.T) {
	rec := func(id uint64, checkReplied, writeSent int64) Record {
		r := Record{ID: id, N: 2}
		r.Steps[0] = Step{Op: OpZCard, Phase: Check, SentUs: checkReplied - 10, RepliedUs: checkReplied}
		r.Steps[1] = Step{Op: OpZAdd, Phase: Write, SentUs: writeSent, RepliedUs: writeSent + 10}
		return r
	}
	reqs, _ := Requests([]Record{rec(1, 100, 300), rec(2, 110, 310), rec(3, 400, 500)})
	got := map[string]bool{}
	for _, r := range reqs {
		got[r.ID] = r.Raced
	}
	if !got["r1"] || !got["r2"] || got["r3"] {
		t.Errorf("raced %v; want r1 and r2 (each checked before the other wrote), not r3", got)
	}
	if b, err := json.Marshal(reqs[0]); err != nil || len(b) == 0 {
		t.Fatal(err)
	}
}

// The rings hold no pointer: a garbage collection never scans them, however many workers.
func TestRecordsHoldNoPointer(t *testing.T) {
	if hasPointers(reflect.TypeOf(Record{})) {
		t.Error("trace.Record holds a pointer: every GC cycle would scan every worker's rings")
	}
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.String, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return hasPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// BenchmarkRecordDecision is the recording's own work for one naive decision (four commands,
// each with its reply and two clock reads) and its filing in the ring: compare its ns/op with a
// decision's CPU cost in the hammer (µs; hack/bench-hammer.sh prints it).
func BenchmarkRecordDecision(b *testing.B) {
	rec := NewRecorder(time.Now(), 3, 8, false)
	b.ReportAllocs()
	for b.Loop() {
		rec.Begin(0)
		for _, op := range []string{"zremrangebyscore", "zcard", "zadd", "pexpire"} {
			s := rec.Step(op, Check)
			sent := rec.Since()
			s.Reply.SetInt(19)
			s.SentUs, s.RepliedUs = sent, rec.Since()
		}
		rec.Keep(true, 1, 2, rec.Since(), 0)
	}
}
