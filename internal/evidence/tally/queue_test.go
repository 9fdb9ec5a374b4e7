package tally

import (
	"slices"
	"testing"
)

func TestMsQueueKeepsMillisecondsInOrderAndMergesRepeats(t *testing.T) {
	var q Queue
	for _, ms := range []int64{10, 12, 12, 11, 15, 9, 12, 14} {
		q.Add(ms, 1)
	}
	want := []Count{{9, 1}, {10, 1}, {11, 1}, {12, 3}, {14, 1}, {15, 1}}
	var got []Count
	for i := 0; i < q.Len(); i++ {
		got = append(got, q.At(i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	q.PopFront()
	q.PopFront()
	q.Add(10, 2) // older than the front now: still placed in order
	if f := q.Front(); f != (Count{10, 2}) || q.Len() != 5 {
		t.Fatalf("after popping two and adding 10 back: front %v, len %d", f, q.Len())
	}
}

func TestMsQueueStopsAllocatingAtItsWorkingSize(t *testing.T) {
	var q Queue
	ms := int64(0)
	churn := func() { // a sliding window of 64 live milliseconds, one in three arriving 2ms late
		ms++
		late := int64(0)
		if ms%3 == 0 {
			late = 2
		}
		q.Add(ms-late, 1)
		for q.Len() > 64 {
			q.PopFront()
		}
	}
	for i := 0; i < 1000; i++ {
		churn()
	}
	if allocs := testing.AllocsPerRun(10_000, churn); allocs != 0 {
		t.Fatalf("steady churn allocated %.2f times per admit, want 0", allocs)
	}
	if cap(q.items) > 4*65 {
		t.Fatalf("array grew to %d for 65 live items", cap(q.items))
	}
}
