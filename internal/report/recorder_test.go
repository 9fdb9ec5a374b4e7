package report

import (
	"testing"
	"time"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
)

func TestRecorderKeepsEveryTickUntilFull(t *testing.T) {
	rec := NewRecorder(0)
	snaps := fixtureSnapshots(50)
	for _, s := range snaps {
		rec.Add(s)
	}
	series := rec.Series()
	if len(series) != 2 || series[0].Name != "naive" || series[1].Name != "lua" {
		t.Fatalf("series = %+v, want naive then lua", names(series))
	}
	if len(series[0].Points) != 50 {
		t.Fatalf("%d points, want 50", len(series[0].Points))
	}
	p := series[0].Points[7]
	s := snaps[7].Strategies[0]
	if p.Elapsed != snaps[7].Elapsed || p.Current != s.TickPeak || p.Throughput != s.Throughput || p.P99 != s.Latency.P99 {
		t.Errorf("point %+v does not match its snapshot %+v", p, s)
	}
}

func TestRecorderBoundsMemoryAndKeepsSpikes(t *testing.T) {
	const maxPoints = 64
	rec := NewRecorder(maxPoints)
	var last time.Duration
	for i := 1; i <= 10_000; i++ {
		last = time.Duration(i) * fixtureTick
		current := int64(18)
		if i == 7_777 { // one tick, deep in the run, through the limit
			current = 31
		}
		rec.Add(bench.Snapshot{Elapsed: last, Strategies: []bench.StrategySnapshot{{
			Name: "naive", Throughput: 5000,
			Latency:  bench.Latency{P50: time.Millisecond, P99: 4 * time.Millisecond},
			Findings: fold.Findings{Current: current, Peak: 31},
		}}})
		if n := len(rec.Series()[0].Points); n > maxPoints {
			t.Fatalf("after %d snapshots: %d points, bound is %d", i, n, maxPoints)
		}
	}
	points := rec.Series()[0].Points
	if len(points) < maxPoints/2 {
		t.Errorf("only %d points kept of %d allowed", len(points), maxPoints)
	}
	spike := false
	for i, p := range points {
		if i > 0 && p.Elapsed <= points[i-1].Elapsed {
			t.Fatalf("elapsed not increasing at %d", i)
		}
		spike = spike || p.Current == 31
		if p.Throughput != 5000 || p.P50 != time.Millisecond {
			t.Fatalf("merging changed a constant: %+v", p)
		}
	}
	if !spike {
		t.Error("the one-tick spike to 31 was averaged away")
	}
	if points[len(points)-1].Elapsed != last {
		t.Errorf("last point at %v, want the last snapshot's %v", points[len(points)-1].Elapsed, last)
	}
}

// Without TickPeak from the engine, a new peak still marks the tick that set it.
func TestRecorderInfersTickHighFromPeak(t *testing.T) {
	rec := NewRecorder(0)
	for i, peak := range []int64{18, 26, 26, 26} {
		rec.Add(bench.Snapshot{Elapsed: time.Duration(i+1) * time.Second, Strategies: []bench.StrategySnapshot{{
			Name:     "naive",
			Findings: fold.Findings{Current: 17, Peak: peak},
		}}})
	}
	got := []int64{}
	for _, p := range rec.Series()[0].Points {
		got = append(got, p.Current)
	}
	want := []int64{18, 26, 17, 17}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Current per point = %v, want %v", got, want)
		}
	}
}

func names(series []Series) []string {
	var out []string
	for _, s := range series {
		out = append(out, s.Name)
	}
	return out
}

func TestTeeRecordsEverythingAndNeverWaitsForTheReader(t *testing.T) {
	rec := NewRecorder(0)
	in := make(chan bench.Snapshot)
	out := rec.Tee(in)
	snaps := fixtureSnapshots(40)

	// A reader that keeps up sees every snapshot.
	for _, s := range snaps[:10] {
		in <- s
		if got := <-out; got.Elapsed != s.Elapsed {
			t.Fatalf("passed on %v, want %v", got.Elapsed, s.Elapsed)
		}
	}
	// A reader that went away (q on the dashboard) must not hold up the engine's sends.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for _, s := range snaps[10:] {
			in <- s
		}
		close(in)
	}()
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		t.Fatal("Tee blocked on a reader that stopped reading")
	}
	for range out { // drain: Tee has then recorded everything and closed out
	}
	series := rec.Series()
	if got := len(series[0].Points); got != len(snaps) {
		t.Fatalf("recorded %d points, want %d", got, len(snaps))
	}
}

// Evidence judged after its windows (an HTTP target's, judge's records) places each proven
// count at its window's time: the chart rises there, not where the ticks saw it judged, and a
// strategy without ticks of its own (judge) still gets its points.
func TestWindowsArePlacedWhereTheyWereNotWhereTheyWereJudged(t *testing.T) {
	windows := []fold.WindowCount{{At: 1 * time.Second, Count: 43}, {At: 1100 * time.Millisecond, Count: 40}, {At: 3 * time.Second, Count: 15}}
	var ticks Series
	for at := 100 * time.Millisecond; at <= 6*time.Second; at += 100 * time.Millisecond {
		p := Point{Elapsed: at}
		if at == 6*time.Second {
			p.Current, p.Peak = 43, 43 // judged at the end
		}
		ticks.Points = append(ticks.Points, p)
	}
	for name, se := range map[string]Series{"ticks": ticks, "no ticks (judge)": {}} {
		placed := placeWindows(se, windows, 6*time.Second)
		var highAt []time.Duration
		for _, p := range placed.Points {
			if p.Current > 20 {
				highAt = append(highAt, p.Elapsed)
			}
		}
		if len(highAt) == 0 || highAt[0] < time.Second || highAt[len(highAt)-1] > 1300*time.Millisecond {
			t.Errorf("%s: above the limit at %v; want only just after 1s", name, highAt)
		}
		if last := placed.Points[len(placed.Points)-1]; last.Peak != 43 {
			t.Errorf("%s: peak %d at the end, want 43", name, last.Peak)
		}
	}
	if got := placeWindows(ticks, nil, 6*time.Second); len(got.Points) != len(ticks.Points) || got.Points[59].Current != 43 {
		t.Errorf("without windows the ticks stand as they were")
	}
}
