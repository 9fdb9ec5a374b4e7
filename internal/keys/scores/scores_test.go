package scores

import (
	"reflect"
	"testing"
	"time"
)

var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestDetectUnitByMagnitudeRelativeToNow(t *testing.T) {
	at := fixedNow.Add(-90 * time.Second)
	cases := []struct {
		score float64
		want  Unit
		ok    bool
	}{
		{UnitSeconds.Score(at), UnitSeconds, true},
		{UnitSeconds.Score(at) + 0.25, UnitSeconds, true},
		{UnitMillis.Score(at), UnitMillis, true},
		{UnitMicros.Score(at), UnitMicros, true},
		{UnitNanos.Score(at), UnitNanos, true},
		{UnitMillis.Score(fixedNow.Add(-9 * 365 * 24 * time.Hour)), UnitMillis, true},
		{UnitMillis.Score(fixedNow.Add(-11 * 365 * 24 * time.Hour)), "", false}, // too old to be a limiter's
		{UnitMillis.Score(fixedNow.Add(23 * time.Hour)), UnitMillis, true},      // a client clock ahead
		{UnitMillis.Score(fixedNow.Add(48 * time.Hour)), "", false},
		{1, "", false}, {42, "", false}, {0, "", false}, {-5, "", false}, {3.5e30, "", false},
	}
	for _, c := range cases {
		got, ok := DetectUnit(c.score, fixedNow)
		if got != c.want || ok != c.ok {
			t.Errorf("DetectUnit(%v) = %q, %v; want %q, %v", c.score, got, ok, c.want, c.ok)
		}
	}
}

func TestScoresRoundTripExactly(t *testing.T) {
	at := fixedNow.Add(-1234567 * time.Microsecond)
	for _, u := range Units {
		score := u.Score(at)
		back, ok := u.Time(score)
		if !ok {
			t.Fatalf("%s: %v not a time", u, score)
		}
		// float64 holds a nanosecond timestamp only to about 256 ns.
		if d := back.Sub(at); d < -256 || d > 256 {
			t.Errorf("%s: %v -> %v, off by %v", u, at, back, d)
		}
	}
	if got := UnitMillis.Score(time.UnixMilli(1748779200123)); got != 1748779200123 {
		t.Errorf("ms score %v, want 1748779200123", got)
	}
	if got := UnitSeconds.Score(time.Unix(1748779194, 500_000_000)); got != 1748779194.5 {
		t.Errorf("s score %v, want 1748779194.5", got)
	}
	if _, ok := UnitSeconds.Time(1.7e12); ok {
		t.Errorf("a millisecond score read as seconds should be out of range")
	}
}

func TestParseUnit(t *testing.T) {
	for _, s := range []string{"auto", "s", "ms", "us", "ns"} {
		if _, err := ParseUnit(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := ParseUnit("sec"); err == nil {
		t.Errorf("sec accepted")
	}
}

func TestSampleRanks(t *testing.T) {
	cases := map[int64][]int64{
		0: nil, 1: {0}, 2: {0, 1}, 3: {0, 1, 2}, 5: {0, 1, 2, 3, 4}, 6: {0, 1, 3, 4, 5}, 1000: {0, 250, 500, 750, 999},
	}
	for size, want := range cases {
		if got := SampleRanks(size); !reflect.DeepEqual(got, want) {
			t.Errorf("SampleRanks(%d) = %v, want %v", size, got, want)
		}
	}
}

func TestReadScores(t *testing.T) {
	ms := func(d time.Duration) float64 { return UnitMillis.Score(fixedNow.Add(d)) }
	s := func(d time.Duration) float64 { return UnitSeconds.Score(fixedNow.Add(d)) }
	cases := []struct {
		name    string
		samples []float64
		unit    Unit
		mode    Mode
		want    Reading
		ok      bool
	}{
		{"start times", []float64{ms(-time.Hour), ms(-time.Minute), ms(-time.Second)}, UnitAuto, ModeAuto, Reading{UnitMillis, Start, true}, true},
		{"a clock a little ahead is no deadline", []float64{ms(-time.Minute), ms(500 * time.Millisecond), ms(900 * time.Millisecond)}, UnitAuto, ModeAuto,
			Reading{UnitMillis, Start, true}, true},
		{"most ahead: deadlines", []float64{s(-time.Hour), s(time.Minute), s(3 * time.Hour)}, UnitAuto, ModeAuto, Reading{UnitSeconds, Deadline, true}, true},
		{"half ahead is not most", []float64{s(-time.Hour), s(-time.Minute), s(time.Minute), s(time.Hour)}, UnitAuto, ModeAuto, Reading{UnitSeconds, Start, true}, true},
		// Deadlines days ahead: times only when they may be deadlines.
		{"deadlines 3 days ahead", []float64{s(72 * time.Hour), s(73 * time.Hour)}, UnitAuto, Deadline, Reading{UnitSeconds, Deadline, false}, true},
		{"start times cannot be 3 days ahead", []float64{s(72 * time.Hour), s(73 * time.Hour)}, UnitAuto, Start, Reading{}, false},
		// Old members in seconds, new ones in milliseconds: no one unit.
		{"mixed Units", []float64{s(-time.Hour), ms(-time.Minute), ms(-time.Second)}, UnitAuto, ModeAuto, Reading{}, false},
		{"ranks", []float64{1, 2, 3}, UnitAuto, ModeAuto, Reading{}, false},
		{"explicit unit is trusted", []float64{1, 2, 3}, UnitSeconds, Start, Reading{UnitSeconds, Start, false}, true},
	}
	for _, c := range cases {
		got, ok := Read(c.samples, fixedNow, c.unit, c.mode)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if !MixedUnits([]float64{s(-time.Hour), ms(-time.Second)}, fixedNow) || MixedUnits([]float64{1, ms(-time.Second)}, fixedNow) {
		t.Errorf("MixedUnits: seconds and milliseconds mix; a rank and a time do not (not times)")
	}
}
