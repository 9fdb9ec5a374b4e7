package history_test

import (
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/history"
)

// genReader writes a vegeta JSON file of n requests as it is read, never whole in memory: 10,000
// requests a second, each 2 ms, every 1,000th taking slow (written when it ends, out of order).
type genReader struct {
	n, next int
	slow    time.Duration
	buf     []byte
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.next < g.n {
		start := base.Add(time.Duration(g.next) * 100 * time.Microsecond)
		r := genRequest{seq: int64(g.next), start: start, latency: 2 * time.Millisecond, code: 200,
			url: "http://127.0.0.1:8080/limited?key=a", key: "a"}
		if g.next%1000 == 999 {
			r.start, r.latency = start.Add(-g.slow), g.slow
		}
		g.buf = vegetaJSONLine(g.buf, r)
		g.next++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[:copy(g.buf, g.buf[n:])]
	return n, nil
}

// peakHeap reads n generated records and returns the most heap in use seen (sampled every
// twentieth of them, after a collection) and the records read.
func peakHeap(t *testing.T, n int, slow time.Duration, opts history.Options) (uint64, int64) {
	r, err := history.New([]history.Input{{Name: "gen.json", R: &genReader{n: n, slow: slow}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	var read int64
	var ms runtime.MemStats
	for r.Next() {
		if read++; read%int64(max(n/20, 1)) == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Late != 0 || st.Records != int64(n) {
		t.Fatalf("stats %+v", st)
	}
	return peak, read
}

func TestReadingTenTimesTheRecordsTakesNoMoreMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 11 million records")
	}
	// Both files fill the window (65,536 records, 6.5 s of this file) and the slow requests
	// fit in it.
	small, slow, opts := 1_000_000, 5*time.Second, history.Options{}
	if raceEnabled { // the race detector's pace: a smaller window (102 ms) and files
		small, slow, opts = 10_000, 50*time.Millisecond, history.Options{ReorderMax: 1 << 10}
	}
	smallPeak, _ := peakHeap(t, small, slow, opts)
	largePeak, read := peakHeap(t, 10*small, slow, opts)
	t.Logf("heap in use at most: %d records %.1f MB, %d records %.1f MB", small, float64(smallPeak)/1e6,
		read, float64(largePeak)/1e6)
	if float64(largePeak) > 1.2*float64(smallPeak)+2e6 {
		t.Fatalf("%d records took %d bytes of heap, %d records %d", 10*small, largePeak, small, smallPeak)
	}
}
