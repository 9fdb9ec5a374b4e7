package report

import (
	"sync"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
)

// Point is one strategy at one moment of the run (or several ticks merged, see Recorder).
type Point struct {
	Elapsed time.Duration
	// Current is the highest in-flight (or per-window) count of the interval the point
	// covers, so an overshoot between two ticks still shows.
	Current int64
	Peak    int64 // the run's peak so far
	// Throughput is decisions per second over the interval.
	Throughput float64
	P50, P99   time.Duration
	// FalseRejects is how many refusals had been proven wrong by the point's end.
	FalseRejects int64
}

// Series is one strategy's points, oldest first.
type Series struct {
	Name   string
	Points []Point
}

// DefaultMaxPoints bounds a Recorder made with NewRecorder(0): at a tick of 100ms that is
// 50s at full resolution, and any longer run at half, a quarter…, of it.
const DefaultMaxPoints = 500

// Recorder turns the engine's snapshots into series with bounded memory: once a series
// holds maxPoints points, neighbours are merged in pairs and every later point covers twice
// as many ticks. Merging keeps the highest Current, Peak and P99, so no overshoot or latency
// spike is averaged away, and the mean throughput and P50. Safe for concurrent use.
type Recorder struct {
	mu        sync.Mutex
	maxPoints int
	stride    int // ticks per point
	order     []string
	byName    map[string]*recording
}

type recording struct {
	points   []Point
	pending  Point // the ticks not yet making a whole point
	merged   int   // how many ticks pending holds
	prevPeak int64
}

// NewRecorder makes a Recorder that keeps at most maxPoints points per strategy
// (DefaultMaxPoints when maxPoints < 2).
func NewRecorder(maxPoints int) *Recorder {
	if maxPoints < 2 {
		maxPoints = DefaultMaxPoints
	}
	return &Recorder{maxPoints: maxPoints, stride: 1, byName: map[string]*recording{}}
}

// Add records one snapshot.
func (r *Recorder) Add(s bench.Snapshot) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range s.Strategies {
		rec := r.byName[st.Name]
		if rec == nil {
			rec = &recording{}
			r.byName[st.Name] = rec
			r.order = append(r.order, st.Name)
		}
		p := Point{
			Elapsed:      s.Elapsed,
			Current:      tickHigh(st, rec.prevPeak),
			Peak:         st.Peak,
			Throughput:   st.Throughput,
			P50:          st.Latency.P50,
			P99:          st.Latency.P99,
			FalseRejects: st.FalseRejects,
		}
		rec.prevPeak = max(rec.prevPeak, st.Peak)
		if rec.merged == 0 {
			rec.pending = p
		} else {
			rec.pending = merge(rec.pending, rec.merged, p, 1)
		}
		rec.merged++
		if rec.merged >= r.stride {
			rec.points = append(rec.points, rec.pending)
			rec.merged = 0
		}
	}
	for _, rec := range r.byName {
		if len(rec.points) >= r.maxPoints {
			r.halve()
			break
		}
	}
}

// Tee records every snapshot from in and passes it on to the channel it returns (for the
// dashboard or the progress lines), which it closes once in is closed. The recording never
// waits for that reader: when the reader is behind, or gone (the user quit the dashboard), a
// tick is not passed on, but it is still recorded. To be sure every snapshot is recorded,
// drain the returned channel (for range out {}) before calling Series.
func (r *Recorder) Tee(in <-chan bench.Snapshot) <-chan bench.Snapshot {
	out := make(chan bench.Snapshot, 1)
	go func() {
		defer close(out)
		for s := range in {
			r.Add(s)
			select {
			case out <- s:
			default:
			}
		}
	}()
	return out
}

// halve merges every series' points in pairs and doubles the ticks per point.
func (r *Recorder) halve() {
	for _, rec := range r.byName {
		half := rec.points[:0]
		for i := 0; i < len(rec.points); i += 2 {
			if i+1 < len(rec.points) {
				half = append(half, merge(rec.points[i], 1, rec.points[i+1], 1))
			} else {
				half = append(half, rec.points[i])
			}
		}
		rec.points = half
	}
	r.stride *= 2
}

// merge combines a point covering na ticks with a later one covering nb; counts so far are
// the later point's.
func merge(a Point, na int, b Point, nb int) Point {
	wa, wb := float64(na), float64(nb)
	return Point{
		Elapsed:      b.Elapsed,
		Current:      max(a.Current, b.Current),
		Peak:         max(a.Peak, b.Peak),
		Throughput:   (a.Throughput*wa + b.Throughput*wb) / (wa + wb),
		P50:          time.Duration((float64(a.P50)*wa + float64(b.P50)*wb) / (wa + wb)),
		P99:          max(a.P99, b.P99),
		FalseRejects: max(a.FalseRejects, b.FalseRejects),
	}
}

// Series returns every strategy's points in the order the strategies first appeared,
// including the newest ticks not yet merged into a whole point.
func (r *Recorder) Series() []Series {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Series, 0, len(r.order))
	for _, name := range r.order {
		rec := r.byName[name]
		points := append([]Point(nil), rec.points...)
		if rec.merged > 0 {
			points = append(points, rec.pending)
		}
		out = append(out, Series{Name: name, Points: points})
	}
	return out
}

// tickHigh is the highest count a tick saw: the engine's TickPeak when it tracks one, and at
// least the run's peak when that peak was set during the tick.
func tickHigh(s bench.StrategySnapshot, prevPeak int64) int64 {
	high := max(s.Current, s.TickPeak)
	if s.Peak > prevPeak {
		high = max(high, s.Peak)
	}
	return high
}

// placeWindows is se with each point's per-window count taken from windows, the counts the
// evidence proved placed at the time they were about (bench.StrategySnapshot.Windows), where it
// has them: a point's count is the most any window starting since the point before certainly
// held. Evidence judged over the calls' intervals is judged long after its windows, and judge's
// at the end, so the ticks' counts would rise late, or all at once at the end. A strategy
// without ticks of its own (judge) gets a point every windowStep of the run's duration d.
func placeWindows(se Series, windows []fold.WindowCount, d time.Duration) Series {
	if len(windows) == 0 {
		return se
	}
	points := append([]Point(nil), se.Points...)
	if len(points) == 0 {
		end := max(d, windows[len(windows)-1].At)
		step := max(windowStep, end/DefaultMaxPoints)
		for at := time.Duration(0); at <= end+step; at += step {
			points = append(points, Point{Elapsed: at})
		}
	}
	next, peak := 0, int64(0)
	for i := range points {
		count := int64(0)
		for next < len(windows) && (windows[next].At < points[i].Elapsed || i == len(points)-1) {
			count = max(count, windows[next].Count)
			next++
		}
		peak = max(peak, count)
		points[i].Current, points[i].Peak = count, max(points[i].Peak, peak)
	}
	return Series{Name: se.Name, Points: points}
}

// windowStep is how far apart the points placeWindows makes are.
const windowStep = 100 * time.Millisecond
