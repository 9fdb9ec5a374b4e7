package report

import (
	"bytes"
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	chart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"

	"github.com/limitctl/limitctl/internal/human"
)

// The charts' colours, from the report's palette (palette.go). The page's legends (HTML, next to
// each chart) use the same hex values.
var (
	colourCount  = colour(hexCount)
	colourFill   = drawing.Color{R: 37, G: 99, B: 235, A: 38} // hexCount, translucent
	colourLimit  = colour(hexLimit)
	colourOver   = colour(hexOver)
	colourRate   = colour(hexRate)
	colourP50    = colour(hexP50)
	colourP99    = colour(hexP99)
	colourGrid   = colour(hexGrid)
	colourAxis   = colour(hexAxis)
	strategyHues = []drawing.Color{
		colourCount, colourRate, colourP50,
		drawing.ColorFromHex("0891b2"), drawing.ColorFromHex("4b5563"), drawing.ColorFromHex("65a30d"),
		drawing.ColorFromHex("9333ea"), drawing.ColorFromHex("1e3a8a"),
	}
)

// Chart sizes in SVG units; the page scales them to its width.
const (
	wideWidth, wideHeight   = 960, 300
	smallWidth, smallHeight = 470, 240
)

// countChart draws one strategy's in-flight (or per-window) count against the limit, with
// every point above the limit marked.
func countChart(s Series, limit int64, what string) (template.HTML, error) {
	if len(s.Points) < 2 {
		return "", nil
	}
	xs, counts := make([]float64, len(s.Points)), make([]float64, len(s.Points))
	var overX, overY []float64
	high := float64(limit)
	for i, p := range s.Points {
		xs[i], counts[i] = p.Elapsed.Seconds(), float64(p.Current)
		high = max(high, counts[i])
		if limit > 0 && p.Current > limit {
			overX, overY = append(overX, xs[i]), append(overY, counts[i])
		}
	}
	series := []chart.Series{
		chart.ContinuousSeries{
			Name: what, XValues: xs, YValues: counts,
			Style: chart.Style{StrokeColor: colourCount, StrokeWidth: 1.5, FillColor: colourFill},
		},
	}
	if limit > 0 {
		series = append(series, limitSeries(xs, limit))
	}
	if len(overX) > 0 {
		series = append(series, chart.ContinuousSeries{
			Name: "above the limit", XValues: overX, YValues: overY,
			Style: chart.Style{StrokeWidth: chart.Disabled, DotWidth: 3, DotColor: colourOver},
		})
	}
	return render(chart.Chart{
		Width: wideWidth, Height: wideHeight,
		XAxis:  timeAxis(xs),
		YAxis:  valueAxis(0, headroom(high), countFormat),
		Series: series,
	})
}

// overviewChart draws every strategy's count on one chart against the limit.
func overviewChart(all []Series, limit int64) (template.HTML, error) {
	var series []chart.Series
	var spanX []float64
	high := float64(limit)
	for i, s := range all {
		if len(s.Points) < 2 {
			continue
		}
		xs, ys := make([]float64, len(s.Points)), make([]float64, len(s.Points))
		for j, p := range s.Points {
			xs[j], ys[j] = p.Elapsed.Seconds(), float64(p.Current)
			high = max(high, ys[j])
		}
		spanX = append(spanX, xs[0], xs[len(xs)-1])
		series = append(series, chart.ContinuousSeries{
			Name: html.EscapeString(s.Name), XValues: xs, YValues: ys,
			Style: chart.Style{StrokeColor: strategyHues[i%len(strategyHues)], StrokeWidth: 1.5},
		})
	}
	if len(series) == 0 {
		return "", nil
	}
	lo, hi := minMax(spanX)
	if limit > 0 { // first, so a strategy holding exactly at the limit is drawn over it
		series = append([]chart.Series{limitSeries([]float64{lo, hi}, limit)}, series...)
	}
	return render(chart.Chart{
		Width: wideWidth, Height: wideHeight,
		XAxis:  timeAxis([]float64{lo, hi}),
		YAxis:  valueAxis(0, headroom(high), countFormat),
		Series: series,
	})
}

// throughputChart draws decisions per second over time.
func throughputChart(s Series) (template.HTML, error) {
	if len(s.Points) < 2 {
		return "", nil
	}
	xs, ys := make([]float64, len(s.Points)), make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i], ys[i] = p.Elapsed.Seconds(), p.Throughput
	}
	_, high := minMax(ys)
	return render(chart.Chart{
		Width: smallWidth, Height: smallHeight,
		XAxis: timeAxis(xs),
		YAxis: valueAxis(0, headroom(high), rateFormat),
		Series: []chart.Series{chart.ContinuousSeries{
			Name: "decisions/s", XValues: xs, YValues: ys,
			Style: chart.Style{StrokeColor: colourRate, StrokeWidth: 1.5},
		}},
	})
}

// latencyChart draws p50 and p99 over time, in milliseconds.
func latencyChart(s Series) (template.HTML, error) {
	if len(s.Points) < 2 {
		return "", nil
	}
	xs := make([]float64, len(s.Points))
	p50, p99 := make([]float64, len(s.Points)), make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i] = p.Elapsed.Seconds()
		p50[i], p99[i] = ms(p.P50), ms(p.P99)
	}
	_, high := minMax(append(append([]float64(nil), p50...), p99...))
	return render(chart.Chart{
		Width: smallWidth, Height: smallHeight,
		XAxis: timeAxis(xs),
		YAxis: valueAxis(0, headroom(high), msFormat),
		Series: []chart.Series{
			chart.ContinuousSeries{Name: "p99", XValues: xs, YValues: p99,
				Style: chart.Style{StrokeColor: colourP99, StrokeWidth: 1.5}},
			chart.ContinuousSeries{Name: "p50", XValues: xs, YValues: p50,
				Style: chart.Style{StrokeColor: colourP50, StrokeWidth: 1.5}},
		},
	})
}

// falseRejectChart draws how many refusals had been proven wrong over time: red once there is
// one, a flat zero in the rate's green (the evidence of none) otherwise.
func falseRejectChart(s Series) (template.HTML, error) {
	if len(s.Points) < 2 {
		return "", nil
	}
	xs, ys := make([]float64, len(s.Points)), make([]float64, len(s.Points))
	for i, p := range s.Points {
		xs[i], ys[i] = p.Elapsed.Seconds(), float64(p.FalseRejects)
	}
	_, high := minMax(ys)
	colour := colourRate
	if high > 0 {
		colour = colourOver
	}
	return render(chart.Chart{
		Width: wideWidth, Height: smallHeight,
		XAxis: timeAxis(xs),
		YAxis: valueAxis(0, headroom(high), rateFormat),
		Series: []chart.Series{chart.ContinuousSeries{
			Name: "false rejects", XValues: xs, YValues: ys,
			Style: chart.Style{StrokeColor: colour, StrokeWidth: 1.5},
		}},
	})
}

func limitSeries(xs []float64, limit int64) chart.Series {
	lo, hi := minMax(xs)
	return chart.ContinuousSeries{
		Name:    "limit " + strconv.FormatInt(limit, 10),
		XValues: []float64{lo, hi}, YValues: []float64{float64(limit), float64(limit)},
		Style: chart.Style{StrokeColor: colourLimit, StrokeWidth: 2, StrokeDashArray: []float64{6, 4}},
	}
}

// timeAxis runs from the start of the run to the last point.
func timeAxis(xs []float64) chart.XAxis {
	_, hi := minMax(xs)
	lo := 0.0
	if hi <= lo {
		hi = lo + 1
	}
	return chart.XAxis{
		Style: chart.Style{FontColor: colourAxis, StrokeColor: colourAxis},
		Range: &chart.ContinuousRange{Min: lo, Max: hi},
		Ticks: ticks(lo, hi, 10, secondsFormat),
	}
}

// valueAxis runs from lo to the first round tick at or above hi, with a grid line per tick.
func valueAxis(lo, hi float64, format func(float64) string) chart.YAxis {
	if hi <= lo {
		hi = lo + 1
	}
	t := ticks(lo, hi, 6, format)
	if last := t[len(t)-1].Value; last < hi {
		t = append(t, chart.Tick{Value: last + step(lo, hi, 6), Label: format(last + step(lo, hi, 6))})
	}
	return chart.YAxis{
		Style:          chart.Style{FontColor: colourAxis, StrokeColor: colourAxis},
		Range:          &chart.ContinuousRange{Min: lo, Max: t[len(t)-1].Value},
		Ticks:          t,
		GridMajorStyle: chart.Style{StrokeColor: colourGrid, StrokeWidth: 1},
	}
}

// step is a round distance (1, 2 or 5 times a power of ten) giving at most n ticks over lo..hi.
func step(lo, hi float64, n int) float64 {
	raw := (hi - lo) / float64(n)
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// ticks are the multiples of a round step between lo and hi.
func ticks(lo, hi float64, n int, format func(float64) string) []chart.Tick {
	st := step(lo, hi, n)
	var out []chart.Tick
	for i := math.Ceil(lo / st); i*st <= hi+st*1e-9; i++ {
		v := i * st
		out = append(out, chart.Tick{Value: v, Label: format(v)})
	}
	if len(out) == 0 {
		out = []chart.Tick{{Value: lo, Label: format(lo)}}
	}
	return out
}

// headroom leaves a little space above the highest value so the line never runs along the top.
func headroom(high float64) float64 {
	if high <= 0 || math.IsNaN(high) || math.IsInf(high, 0) {
		return 1
	}
	return high * 1.15
}

func minMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 1
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func secondsFormat(v float64) string { return trimFloat(v) + "s" }
func countFormat(v float64) string   { return trimFloat(v) }
func msFormat(v float64) string      { return trimFloat(v) + "ms" }
func rateFormat(v float64) string    { return human.Compact(v) }

// trimFloat prints a tick value without needless decimals: 120, 12.5, 0.25.
func trimFloat(v float64) string {
	decimals := 2
	switch a := math.Abs(v); {
	case a >= 100:
		decimals = 0
	case a >= 10:
		decimals = 1
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// render draws a chart as inline SVG.
func render(c chart.Chart) (template.HTML, error) {
	var buf bytes.Buffer
	if err := c.Render(chart.SVG, &buf); err != nil {
		return "", fmt.Errorf("chart: %w", err)
	}
	return template.HTML(buf.String()), nil //nolint:gosec // go-chart's SVG, names escaped
}
